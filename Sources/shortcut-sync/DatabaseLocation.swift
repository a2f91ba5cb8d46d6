import EmbeddedPostgres
import Foundation
import ServiceLifecycle
import ShortcutSyncStore

/// Where a command finds its database: the URL it was given, or the embedded cluster.
struct DatabaseLocation: Sendable {
    static let embeddedDatabaseName = "shortcut_sync"

    /// The URL of the service's database.
    let url: DatabaseURL
    /// The embedded cluster, when no URL was given.
    let embedded: EmbeddedPostgres?

    /// The embedded cluster as a service, to put first in a command's `ServiceGroup` so that it
    /// stops last, after everything that uses it; none with a URL.
    var services: [any Service] {
        embedded.map { [$0] } ?? []
    }

    /// The embedded cluster's data directory: on the database's disk, for a bench's `FlushProbe`.
    var embeddedDataDirectory: URL? { embedded?.dataDirectory }
}

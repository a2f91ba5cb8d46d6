import Foundation
import NIOCore
import PostgresNIO
import ShortcutSyncDomain

/// What an import added (what the database already had is not counted).
public struct ImportCounts: Sendable, Hashable, Codable {
    public var accounts = 0
    public var devices = 0
    public var events = 0
    /// Events of the file the database already held.
    public var eventsAlreadyStored = 0
    /// Rows of a compacted account's snapshot (issue 58) stored.
    public var snapshotRows = 0
}

import Foundation
import Logging

/// Where the commands find their database: the URL they were given, or the embedded cluster.
public struct DatabaseLocation: Sendable {
    /// The URL of the service's database.
    public let url: DatabaseURL
    /// The embedded cluster, when no URL was given; stopped by `close()` or at exit.
    public let embedded: EmbeddedPostgres?

    public static let embeddedDatabaseName = "shortcut_sync"

    /// Uses `databaseURL` if given (creating its database if missing), else starts the embedded cluster.
    public static func resolve(databaseURL: String?, dataDirectory: String, logger: Logger) async throws -> DatabaseLocation {
        if let databaseURL, !databaseURL.isEmpty {
            let url = try DatabaseURL(databaseURL)
            try await url.createDatabaseIfMissing(logger: logger)
            return DatabaseLocation(url: url, embedded: nil)
        }
        let cluster = EmbeddedPostgres(dataDirectory: URL(fileURLWithPath: dataDirectory), logger: logger)
        let connection = try cluster.start()
        let url = try DatabaseURL(connection.url(database: embeddedDatabaseName))
        try await url.createDatabaseIfMissing(logger: logger)
        return DatabaseLocation(url: url, embedded: cluster)
    }

    public func close() {
        embedded?.stop()
    }
}

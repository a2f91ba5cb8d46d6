import ArgumentParser
import EmbeddedPostgres
import Foundation
import Logging
import ShortcutSyncStore

/// The options every command that touches the database shares.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .long, help: "PostgreSQL URL (env DATABASE_URL). Without one, an embedded PostgreSQL is used.")
    var databaseURL: String?

    @Option(name: .long, help: "Where the embedded PostgreSQL keeps its data.")
    var dataDir: String = ".shortcut-sync"

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical (default: info; error for admin).")
    var logLevel: String?

    var logger: Logger { logger(defaultLevel: .info) }

    /// The logger (on standard error), at `--log-level` if given.
    func logger(defaultLevel: Logger.Level) -> Logger {
        var logger = Logger(label: "shortcut-sync")
        logger.logLevel = logLevel.flatMap(Logger.Level.init(rawValue:)) ?? defaultLevel
        return logger
    }

    func validate() throws {
        if let logLevel, Logger.Level(rawValue: logLevel) == nil {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
    }

    /// Runs `body` with the database: `--database-url` (or `DATABASE_URL`), its database created
    /// if missing, or else the embedded cluster under `--data-dir`, started (or joined) first and,
    /// if this process started it, stopped after `body`, also when `body` throws.
    func withDatabase<Result>(
        logger: Logger? = nil,
        _ body: (DatabaseLocation) async throws -> Result
    ) async throws -> Result {
        let logger = logger ?? self.logger
        if let given = databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"], !given.isEmpty {
            let url = try DatabaseURL(given)
            try await url.createDatabaseIfMissing(logger: logger)
            return try await body(DatabaseLocation(url: url, embedded: nil))
        }
        let cluster = EmbeddedPostgres(dataDirectory: URL(fileURLWithPath: dataDir), logger: logger)
        do {
            let connection = try await cluster.start()
            let url = try DatabaseURL(connection.url(database: DatabaseLocation.embeddedDatabaseName))
            try await url.createDatabaseIfMissing(logger: logger)
            let result = try await body(DatabaseLocation(url: url, embedded: cluster))
            await cluster.stop()
            return result
        } catch {
            await cluster.stop()
            throw error
        }
    }
}

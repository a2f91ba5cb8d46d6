import ArgumentParser
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

    func resolve(logger: Logger? = nil) async throws -> DatabaseLocation {
        try await DatabaseLocation.resolve(
            databaseURL: databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"],
            dataDirectory: dataDir, logger: logger ?? self.logger)
    }
}

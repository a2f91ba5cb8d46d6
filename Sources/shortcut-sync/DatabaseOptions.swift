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

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    var logger: Logger {
        var logger = Logger(label: "shortcut-sync")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        return logger
    }

    func resolve() async throws -> DatabaseLocation {
        try await DatabaseLocation.resolve(
            databaseURL: databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"],
            dataDirectory: dataDir, logger: logger)
    }
}

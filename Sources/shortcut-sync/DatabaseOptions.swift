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
        if let warning = Self.passwordWarning(databaseURL) {
            FileHandle.standardError.write(Data((warning + "\n").utf8))
        }
    }

    /// What to say when `--database-url` itself carries a password: the command line of a running
    /// process is readable by every user of the machine (`ps`, `/proc/<pid>/cmdline`). The
    /// password is used, and never printed.
    static func passwordWarning(_ databaseURL: String?) -> String? {
        guard let databaseURL, let url = try? DatabaseURL(databaseURL), url.password?.isEmpty == false else { return nil }
        return "warning: --database-url carries a password, which any user of this machine can read in the process list; "
            + "give it in DATABASE_URL, PGPASSWORD or ~/.pgpass (or PGPASSFILE) instead"
    }

    /// `--database-url` (or `DATABASE_URL`) if one was given, with its password taken as libpq's
    /// tools take it when the URL has none (`PGPASSWORD`, `PGPASSFILE` or `~/.pgpass`).
    func givenURL(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> DatabaseURL? {
        guard let given = databaseURL ?? environment["DATABASE_URL"], !given.isEmpty else { return nil }
        let url = try DatabaseURL(given)
        return url.withPassword(environment: environment)
    }

    /// Runs `body` with the database: `--database-url` (or `DATABASE_URL`), its database created
    /// if missing, or else the embedded cluster under `--data-dir`, started (or joined) first and,
    /// if this process started it, stopped after `body`, also when `body` throws.
    func withDatabase<Result>(
        logger: Logger? = nil,
        settings: [(name: String, value: String)] = [],
        _ body: (DatabaseLocation) async throws -> Result
    ) async throws -> Result {
        let logger = logger ?? self.logger
        if let url = try givenURL() {
            do {
                try await url.createDatabaseIfMissing(logger: logger)
            } catch where DatabaseFailure(error) == .passwordRequired {
                throw PasswordRequired(url: url, dataDir: dataDir)
            }
            return try await body(DatabaseLocation(url: url, embedded: nil))
        }
        let cluster = EmbeddedPostgres(dataDirectory: URL(fileURLWithPath: dataDir), logger: logger, settings: settings)
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

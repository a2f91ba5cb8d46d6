import Logging
import ShortcutSyncAdmin
import ShortcutSyncStore

/// Runs `body` with an `Operator` on `database` (migrated first), on a small pool of its own that
/// is closed when `body` ends: what every `admin` command does.
public func withOperator<Result: Sendable>(database: DatabaseURL, logger: Logger, isolation: isolated (any Actor)? = #isolation,
                                           _ body: (Operator) async throws -> Result) async throws -> Result {
    try await Migrator.migrate(database, logger: logger)
    let client = try database.commandPool(maximumConnections: 6, logger: logger)
    // An operator's statements take as long as their work (`SessionLimits.command`).
    return try await SessionLimits.withStatementDeadline(SessionLimits.command.statementDeadline) {
        try await client.withRunning {
            try await body(Operator(client: client, logger: logger, database: database))
        }
    }
}

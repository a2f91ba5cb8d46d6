import Foundation
import Logging
import PostgresNIO

extension PostgresConnection {
    /// Runs `body` behind a savepoint of the caller's transaction: when it fails and the
    /// transaction is still usable (neither cancelled nor the database gone), its writes are
    /// rolled back to the savepoint and `recover` answers in its place, so one part of a
    /// transaction can fail without failing the rest. Any other failure is rethrown as it is.
    public func inSavepoint<Result>(
        _ name: String,
        logger: Logger,
        _ body: (PostgresConnection) async throws -> Result,
        recover: (any Error) async throws -> Result
    ) async throws -> Result {
        let savepoint = Self.quoted(name)
        try await guardedQuery("SAVEPOINT \(unescaped: savepoint)", logger: logger)
        do {
            let result = try await body(self)
            try await guardedQuery("RELEASE SAVEPOINT \(unescaped: savepoint)", logger: logger)
            return result
        } catch where !Task.isCancelled && !DatabaseAvailability.isUnavailable(error) {
            try await guardedQuery("ROLLBACK TO SAVEPOINT \(unescaped: savepoint)", logger: logger)
            return try await recover(error)
        }
    }

    /// `name` as an SQL identifier.
    private static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

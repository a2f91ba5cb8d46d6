import PostgresNIO
import ShortcutSyncStore

/// A connection of its own to the test database, closed after `body`.
public func withConnection<Result: Sendable>(
    _ url: DatabaseURL,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (PostgresConnection) async throws -> Result
) async throws -> Result {
    let logger = TestDatabase.shared.logger
    let connection = try await PostgresConnection.connect(configuration: try url.connectionConfiguration(), id: 99, logger: logger)
    do {
        let result = try await body(connection)
        try await connection.close()
        return result
    } catch {
        try? await connection.close()
        throw error
    }
}

import Foundation
import Logging
import PostgresNIO
@testable import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

/// What the store's transactions do when the server ends the session under them.
@Suite struct ConnectionLossTests {
    @Test func aTransactionOnATerminatedConnectionFailsInsteadOfHanging() async throws {
        try await TestDatabase.withClient { client, url in
            let logger = TestDatabase.shared.logger
            let connection = try await PostgresConnection.connect(configuration: try url.connectionConfiguration(), id: 7, logger: logger)
            let pid = try await connection.query("SELECT pg_backend_pid()", logger: logger).decode(Int32.self).collectAll().first!
            try await client.query("SELECT pg_terminate_backend(\(pid))")
            try await Task.sleep(for: .milliseconds(200))
            await #expect(throws: (any Error).self) {
                try await connection.inTransaction(logger: logger) { connection in
                    try await connection.query("SELECT 1", logger: logger)
                }
            }
            try? await connection.close()
        }
    }
}

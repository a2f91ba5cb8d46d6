import Foundation
import PostgresNIO
import ShortcutSyncApp
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncServer
import ShortcutSyncStore
import Testing

/// A service whose start fails (its migrations meet a database they cannot migrate) ends with
/// that error: `withRunningService` waited for its ports for ever, and a test with it (a full
/// suite once hung so, in a failover test whose migration failed).
@Suite struct FailedStartTests {
    @Test(.timeLimit(.minutes(1))) func aStartWhoseMigrationsFailEndsWithTheirError() async throws {
        let url = try await TestDatabase.shared.emptyDatabase()
        // A table in the way of the first migration's.
        try await url.withSingleConnection(logger: TestDatabase.shared.logger) { connection in
            try await connection.guardedQuery("CREATE TABLE events (in_the_way int)", logger: TestDatabase.shared.logger)
        }
        let server = ServerConfiguration(host: "127.0.0.1", port: 0, adminToken: "admin-\(UUID())", maximumConnections: 4)
        let configuration = ServeConfiguration(server: server, database: url, runsWorker: false)
        var ranBody = false
        await #expect(throws: (any Error).self) {
            try await withRunningService(configuration, logger: TestDatabase.shared.logger) { _ in ranBody = true }
        }
        #expect(!ranBody, "a service that never listened runs nothing against it")
    }
}

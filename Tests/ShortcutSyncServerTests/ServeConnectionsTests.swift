import Foundation
import PostgresNIO
import ShortcutSyncApp
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncServer
import ShortcutSyncTestSupport
import ShortcutSyncStore
import Testing

/// `serve` keeps open from its start as many of its pool's connections as pushes may run at once
/// (`ServerConfiguration.connectionsKeptOpen` unset), so that its pool arms no idle timer while
/// the load stays within them (docs/decisions.md, "The pool's connections kept open, and not pinged").
@Suite struct ServeConnectionsTests {
    @Test func aServiceKeepsOpenAsManyConnectionsAsPushesRun() async throws {
        try await TestServer.with(configure: { $0.server.connectionsKeptOpen = nil; $0.server.maximumPushesRunning = 8 }) { server in
            let count = {
                try await server.sql.query(
                    "SELECT count(*)::int FROM pg_stat_activity WHERE datname = current_database() AND application_name = \(DatabaseURL.applicationName)",
                    logger: TestDatabase.shared.logger).decode(Int.self).collectAll().first ?? 0
            }
            // Nothing was asked of the service but its start: the pool opens them on its own.
            try await eventually("the service holds its 8 pushes' connections", timeout: .seconds(10)) { try await count() >= 8 }
            #expect(try await count() >= 8)
        }
    }
}

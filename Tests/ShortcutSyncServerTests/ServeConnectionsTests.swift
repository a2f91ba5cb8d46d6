import Foundation
import PostgresNIO
import ShortcutSyncApp
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncServer
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
            let deadline = ContinuousClock.now + .seconds(10)
            while try await count() < 8, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            // Nothing was asked of the service but its start: the pool opened them on its own.
            #expect(try await count() >= 8)
        }
    }
}

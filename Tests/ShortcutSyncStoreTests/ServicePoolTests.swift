import Foundation
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
@testable import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

private let logger = TestDatabase.shared.logger

/// The service's pool keeps the connections its pushes use open from its start and pings none
/// (`DatabaseURL.serviceClientConfiguration`): PostgresNIO arms a timer for each connection that
/// goes back idle, one for its keep-alive and one for its idle timeout, unless neither applies.
@Suite struct ServicePoolTests {
    @Test func theServicePoolOpensTheConnectionsItKeepsBeforeAnyStatementAndPingsNone() async throws {
        try await TestDatabase.withClient { sql, url in
            let configuration = try await url.serviceClientConfiguration(maximumConnections: 6, keptOpen: 3, logger: logger)
            #expect(configuration.options.keepAliveBehavior == nil)
            #expect(try await Self.sessions(of: configuration, settlingAt: 3, sql: sql) == 3)
        }
    }

    @Test func itKeepsNoMoreThanItsMaximumOpen() async throws {
        try await TestDatabase.withClient { sql, url in
            let configuration = try await url.serviceClientConfiguration(maximumConnections: 2, keptOpen: 5, logger: logger)
            #expect(configuration.options.minimumConnections == 2)
            #expect(try await Self.sessions(of: configuration, settlingAt: 2, sql: sql) == 2)
        }
    }

    /// The service's sessions plan prepared statements once on one PostgreSQL, and at every run
    /// on Citus and when the database could not be asked at start: a service started while the
    /// database is away may be a Citus cluster's, where PostgreSQL's default plan mode could grow
    /// a node's sessions without end.
    @Test func thePlanModeIsGenericOnOnePostgreSQLAndWithValuesWhenTheDatabaseCannotBeAsked() async throws {
        try await TestDatabase.withClient { _, url in
            let here = try await url.serviceClientConfiguration(maximumConnections: 2, keptOpen: 0, logger: logger)
            #expect(here.options.additionalStartupParameters.filter { $0.0 == "plan_cache_mode" }.map(\.1) == ["force_generic_plan"])
        }
        // Nothing listens on port 1 of the loopback address.
        let away = try DatabaseURL("postgres://nobody@127.0.0.1:1/shortcut_sync")
        let configuration = try await away.serviceClientConfiguration(maximumConnections: 2, keptOpen: 0, logger: logger)
        #expect(configuration.options.additionalStartupParameters.filter { $0.0 == "plan_cache_mode" }.map(\.1) == ["force_custom_plan"])
    }

    /// The sessions a pool of `configuration` holds on its own, running and asked for nothing:
    /// counted once they reach `expected` (`eventually`, at most 10 s) and half a second more have
    /// passed.
    static func sessions(of configuration: PostgresClient.Configuration, settlingAt expected: Int, sql: PostgresClient) async throws -> Int {
        var configuration = configuration
        #expect(configuration.options.additionalStartupParameters.contains { $0 == ("application_name", DatabaseURL.applicationName) })
        // Named apart from the other tests' pools, which run at the same time on the cluster.
        let name = "pool-\(UInt32.random(in: 0...UInt32.max))"
        configuration.options.additionalStartupParameters.removeAll { $0.0 == "application_name" }
        configuration.options.additionalStartupParameters.append(("application_name", name))
        let pool = PostgresClient(configuration: configuration, backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await pool.run() }
            defer { group.cancelAll() }
            let count = {
                try await sql.query("SELECT count(*)::int FROM pg_stat_activity WHERE application_name = \(name)", logger: logger)
                    .decode(Int.self).collectAll().first ?? 0
            }
            try await eventually("the pool holds \(expected) sessions", timeout: .seconds(10)) { try await count() >= expected }
            try await Task.sleep(for: .milliseconds(500))
            return try await count()
        }
    }
}

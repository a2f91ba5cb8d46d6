import PostgresNIO
import ShortcutSyncStore

/// How many sessions of the test's database wait for a lock now (`pg_stat_activity`): what a
/// test holding a lock waits for before it lets go (the suite's databases share one cluster).
public func sessionsWaitingForALock(_ client: PostgresClient) async throws -> Int64 {
    try await client.query("""
        SELECT count(*)::int8 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
        """, logger: TestDatabase.shared.logger).decode(Int64.self).collectAll().first ?? 0
}

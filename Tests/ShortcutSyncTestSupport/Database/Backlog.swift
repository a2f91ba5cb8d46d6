import Foundation
import PostgresNIO
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport

/// Writes events into the log as an import does, without folding them: the account's head moves
/// to its last event and its folded version stays where it was, so the maintenance tasks fold it.
/// Like an import, the events are a push of their own to the account's history (migration 0027):
/// they and the head take a new history value.
public func writeBacklog(_ events: [AcceptedEvent], account: UUID, client: PostgresClient) async throws {
    guard !events.isEmpty else { return }
    let version = try await client.query("SELECT coalesce(max(version), 0) FROM events WHERE account_id = \(account)",
                                         logger: TestDatabase.shared.logger).decode(Int64.self).collectAll().first ?? 0
    let bodies = events.map(\.event.body.fieldsJSON)
    let history = Int64.random(in: 1...Int64.max)
    try await client.query("""
        INSERT INTO events (account_id, version, device_id, seq, event_id, type, hlc_wall, hlc_counter, body, history)
        SELECT \(account), \(version) + ord, d, s, i, t, w, c, b::jsonb, \(history)
        FROM unnest(\(events.map(\.deviceId))::uuid[], \(events.map(\.event.seq))::int8[], \(events.map(\.event.id))::uuid[],
                    \(events.map(\.event.type.rawValue))::text[], \(events.map(\.event.hlc.wallMillis))::int8[],
                    \(events.map { Int64($0.event.hlc.counter) })::int8[], \(bodies)::text[]) WITH ORDINALITY AS k(d, s, i, t, w, c, b, ord)
        """, logger: TestDatabase.shared.logger)
    try await client.query("""
        INSERT INTO account_heads (account_id, version, folded_version, history) VALUES (\(account), \(version + Int64(events.count)), 0, \(history))
        ON CONFLICT (account_id) DO UPDATE SET version = excluded.version, history = excluded.history
        """, logger: TestDatabase.shared.logger)
}

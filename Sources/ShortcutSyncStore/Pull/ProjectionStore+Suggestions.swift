import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

extension ProjectionStore {
    /// How many donation groups choose the shortcuts a suggestions request scores, twice over: the
    /// account's most donated groups and its most recently donated (DESIGN §3). An account with
    /// fewer has all of its shortcuts scored; a larger one costs the request no more than the
    /// shortcuts of twice this many groups.
    public static let suggestionCandidates = 256

    /// The inputs of `device`'s suggestions (DESIGN §3, §5): the sums of every donation group of
    /// the candidate shortcuts in its view — every one, up to `suggestionCandidates` groups; beyond,
    /// those of the most donated and of the most recently donated groups (by key, so the same
    /// whatever order the events arrived in) — read in one snapshot through the account's keys. Two statements, each naming
    /// the account; the cost is bounded by the candidates' groups (at most 16 each), never the
    /// account's history.
    public func suggestionInputs(account: UUID, device: UUID) async throws -> SuggestionInputs {
        try await client.withConnection { connection in
            try await connection.inTransaction(.readOnlySnapshot, logger: logger) { connection in
                var inputs = SuggestionInputs()
                let head = try await connection.guardedQuery("""
                    SELECT coalesce((SELECT a.version FROM projection_accounts a WHERE a.account_id = \(account)), 0),
                           (SELECT d.platform FROM devices d WHERE d.account_id = \(account) AND d.device_id = \(device)),
                           (SELECT (e.body->>'utcOffsetMinutes')::int4 FROM events e
                            WHERE e.account_id = \(account) AND e.device_id = \(device) AND e.type = 'donation'
                            ORDER BY e.seq DESC LIMIT 1)
                    """, logger: logger)
                for try await (version, platform, offset) in head.decode((Int64, String?, Int32?).self) {
                    inputs.version = version
                    inputs.platform = platform
                    inputs.latestUTCOffsetMinutes = offset.map(Int.init)
                }
                // A group has a row while one of its donations is uncovered: its shortcut is in the
                // view. Titles are read afterwards for the few answered (`suggestionTitles`).
                let candidates = Self.suggestionCandidates
                // The groups are ranked, not their shortcuts: an aggregate per shortcut sorted the
                // account's groups by text first (42 ms for 10,000 in EXPLAIN ANALYZE; 15 ms thus).
                // A group's donation count and latest key are functions of the event set, and keys
                // are unique, so the order is total and independent of arrival.
                let rows = try await connection.guardedQuery("""
                    WITH visible AS MATERIALIZED (
                        SELECT g.bundle_id, g.identifier, g.donations, g.latest_key
                        FROM projection_donation_groups g
                        LEFT JOIN projection_devices d ON d.account_id = \(account) AND d.device_id = \(device)
                        WHERE g.account_id = \(account) AND g.habits IS NOT NULL
                          AND (d.installed IS NULL OR g.bundle_id = ANY(d.installed))
                    ), chosen AS (
                        (SELECT bundle_id, identifier FROM visible ORDER BY donations DESC, latest_key DESC LIMIT \(candidates))
                        UNION
                        (SELECT bundle_id, identifier FROM visible ORDER BY latest_key DESC LIMIT \(candidates))
                    )
                    SELECT g.bundle_id, g.identifier, g.habits
                    FROM chosen c
                    CROSS JOIN LATERAL (SELECT g.bundle_id, g.identifier, g.habits FROM projection_donation_groups g
                                        WHERE g.account_id = \(account) AND g.bundle_id = c.bundle_id AND g.identifier = c.identifier
                                          AND g.habits IS NOT NULL OFFSET 0) g
                    """, logger: logger)
                for try await (bundleId, identifier, habits) in rows.decode((String, String, ByteBuffer).self) {
                    let shortcut = ShortcutID(bundleId: bundleId, identifier: identifier)
                    // A shortcut's groups add up: its sums are theirs together.
                    let sums = try ShortcutHabits(stored: habits)
                    if inputs.candidates[shortcut] == nil { inputs.candidates[shortcut] = sums } else { inputs.candidates[shortcut]?.add(sums) }
                }
                return inputs
            }
        }
    }

    /// The titles of `shortcuts` (their latest donation's), one statement naming the account;
    /// a shortcut that left the view meanwhile has none.
    public func suggestionTitles(account: UUID, shortcuts: [ShortcutID]) async throws -> [ShortcutID: String] {
        guard !shortcuts.isEmpty else { return [:] }
        let rows = try await client.query("""
            SELECT s.bundle_id, s.identifier, s.view->>'title'
            FROM projection_shortcuts s
            JOIN unnest(\(shortcuts.map(\.bundleId))::text[], \(shortcuts.map(\.identifier))::text[]) AS k(b, i)
              ON s.bundle_id = k.b AND s.identifier = k.i
            WHERE s.account_id = \(account) AND s.view IS NOT NULL
            """, logger: logger)
        var titles: [ShortcutID: String] = [:]
        for try await (bundleId, identifier, title) in rows.decode((String, String, String?).self) {
            titles[ShortcutID(bundleId: bundleId, identifier: identifier)] = title
        }
        return titles
    }
}

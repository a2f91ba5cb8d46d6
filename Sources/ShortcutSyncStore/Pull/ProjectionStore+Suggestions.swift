import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

extension ProjectionStore {
    /// How many shortcuts a suggestions request scores, twice over: the account's most donated
    /// and its most recently donated (DESIGN §3). An account with fewer has all of its shortcuts
    /// scored; a larger one costs the request no more than twice this many rows.
    public static let suggestionCandidates = 256

    /// How many of a device's latest events a suggestions request without an offset looks
    /// through for the latest donation's (else it counts as 0).
    public static let offsetWindow = 1_000

    /// The inputs of `device`'s suggestions (DESIGN §3, §5): the sums of the candidate shortcuts
    /// in its view — every one, up to `suggestionCandidates`; beyond, the most donated and the
    /// most recently donated (by key, so the same whatever order the events arrived in) — read in
    /// one snapshot. Two statements, each naming the account; the second reads the top of two
    /// indexes, at most twice `suggestionCandidates` rows, whatever the account holds.
    ///
    /// `latestOffset`: also the offset from UTC of the device's latest donation among its last
    /// `offsetWindow` events (`latestUTCOffsetMinutes`), for a request that gives none.
    public func suggestionInputs(account: UUID, device: UUID, latestOffset: Bool = true) async throws -> SuggestionInputs {
        try await client.withConnection { connection in
            try await connection.inTransaction(.readOnlySnapshot, logger: logger) { connection in
                var inputs = SuggestionInputs()
                // The device's last events through its seq index, newest first: what the request
                // reads for the offset does not grow with the device's history (a donation among
                // all of the account's, sorted, took 12 ms at 30,000 donations).
                let head = try await connection.guardedQuery("""
                    SELECT coalesce((SELECT a.version FROM projection_accounts a WHERE a.account_id = \(account)), 0),
                           (SELECT d.platform FROM devices d WHERE d.account_id = \(account) AND d.device_id = \(device)),
                           (SELECT (l.body->>'utcOffsetMinutes')::int4
                            FROM (SELECT e.type, e.body FROM events e
                                  WHERE e.account_id = \(account) AND e.device_id = \(device) AND \(latestOffset)
                                  ORDER BY e.seq DESC LIMIT \(Self.offsetWindow)) l
                            WHERE l.type = 'donation' LIMIT 1)
                    """, logger: logger)
                for try await (version, platform, offset) in head.decode((Int64, String?, Int32?).self) {
                    inputs.version = version
                    inputs.platform = platform
                    inputs.latestUTCOffsetMinutes = offset.map(Int.init)
                }
                // A shortcut's row holds its groups' sums together (NULL: none), its donation
                // count and its latest donation's key, kept by the fold. Two index reads, from the
                // top (most donated, then most recently donated; keys are unique, so each order is
                // total and independent of arrival), each stopping at `candidates` rows of apps
                // the device has (all, when it has reported none). Titles are read afterwards for
                // the few answered (`suggestionTitles`).
                let candidates = Self.suggestionCandidates
                let rows = try await connection.guardedQuery("""
                    WITH i AS (
                        SELECT (SELECT d.installed FROM projection_devices d WHERE d.account_id = \(account) AND d.device_id = \(device)) AS installed
                    )
                    (SELECT s.bundle_id, s.identifier, s.habits FROM projection_shortcuts s, i
                     WHERE s.account_id = \(account) AND s.habits IS NOT NULL AND (i.installed IS NULL OR s.bundle_id = ANY(i.installed))
                     ORDER BY s.donations DESC, s.latest_key DESC LIMIT \(candidates))
                    UNION ALL
                    (SELECT s.bundle_id, s.identifier, s.habits FROM projection_shortcuts s, i
                     WHERE s.account_id = \(account) AND s.habits IS NOT NULL AND (i.installed IS NULL OR s.bundle_id = ANY(i.installed))
                     ORDER BY s.latest_key DESC LIMIT \(candidates))
                    """, logger: logger)
                for try await (bundleId, identifier, habits) in rows.decode((String, String, ByteBuffer).self) {
                    let shortcut = ShortcutID(bundleId: bundleId, identifier: identifier)
                    // In both orders, it is read twice: decoded once.
                    if inputs.candidates[shortcut] == nil { inputs.candidates[shortcut] = try ShortcutHabits(stored: habits) }
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

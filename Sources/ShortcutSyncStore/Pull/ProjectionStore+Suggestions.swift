import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

extension ProjectionStore {
    /// How many shortcuts a suggestions request scores, twice over: the account's most donated
    /// and its most recently donated (DESIGN §3). An account with fewer has all of its shortcuts
    /// scored; a larger one costs the request no more than twice this many rows.
    public static let suggestionCandidates = 256

    /// How far down each order a suggestions request looks for shortcuts of apps the device has:
    /// a device that reports few of the account's apps is offered candidates among the account's
    /// `suggestionReach` most donated and most recently donated shortcuts, so that the rows a
    /// request walks are bounded too (a device with none of them walked every row: p99 20 ms at
    /// 10,000 shortcuts).
    public static let suggestionReach = 1_024

    /// How many of a device's latest events a suggestions request without an offset looks
    /// through for the latest donation's (else it counts as 0).
    public static let offsetWindow = 1_000

    /// The inputs of `device`'s suggestions (DESIGN §3, §5): the sums of the candidate shortcuts
    /// in its view — every one, up to `suggestionCandidates`; beyond, the most donated and the
    /// most recently donated (by key, so the same whatever order the events arrived in) — read in
    /// one statement (so one snapshot) that names the account and reads the top of two indexes,
    /// at most twice `suggestionCandidates` rows, whatever the account holds.
    ///
    /// `latestOffset`: also the offset from UTC of the device's latest donation among its last
    /// `offsetWindow` events (`latestUTCOffsetMinutes`), for a request that gives none.
    /// `candidates` and `reach` are the bounds above; tests make them small.
    ///
    /// With a `suggestionCache` that holds the candidates of the device's last request, the
    /// statement is given the head's mark they were read at, and reads no sums when the head
    /// still has it: the account's rows are as they were then, and the kept ones are taken.
    public func suggestionInputs(account: UUID, device: UUID, latestOffset: Bool = true,
                                 candidates: Int = suggestionCandidates, reach: Int = suggestionReach) async throws -> SuggestionInputs {
        precondition(candidates > 0 && reach >= candidates, "a request looks at least as far as it takes")
        let key = SuggestionCandidateCache.Key(account: account, device: device, candidates: candidates, reach: reach)
        let kept = suggestionCache?.entry(for: key)
        // The first row: the account's version, the device's platform, the offset of its latest
        // donation (its last events through its seq index, newest first: what the request reads
        // for the offset does not grow with the device's history; a donation among all of the
        // account's, sorted, took 12 ms at 30,000 donations) and the head's mark. Then, unless
        // the mark is the kept one (a one-time filter: no index is read then), the candidates.
        // A shortcut's row holds its groups' sums together (NULL: none), its donation count and
        // its latest donation's key, kept by the fold. Two index reads, from the top (most
        // donated, then most recently donated; keys are unique, so each order is total and
        // independent of arrival), each stopping at `candidates` rows of apps the device has
        // (all, when it has reported none) or after `reach` rows, whichever comes first. Titles
        // are read afterwards for the few answered (`suggestionTitles`). The app filter reads the
        // device's apps through a subplan, not a join: a join loses the order the index gives,
        // and PostgreSQL then sorts all `reach` rows even for a device that filters nothing.
        let statement = SuggestionInputsStatement(account: account, device: device, latestOffset: latestOffset, candidates: candidates,
                                                  reach: reach, keptMark: kept?.mark)
        let rows = try await client.withConnection { connection in
            // Prepared on one PostgreSQL, planned once per connection: it is most of a request
            // whose sums are kept. On Citus as a query of its own, which Citus routes at each call.
            if try await writeRoute.form(on: connection, logger: logger) == .distributedFunction {
                return try await connection.guardedQuery(PostgresQuery(unsafeSQL: SuggestionInputsStatement.sql, binds: try statement.makeBindings()),
                                                         logger: logger).decode(SuggestionInputsStatement.Row.self).collectAll()
            }
            return try await connection.guardedExecute(statement, logger: logger)
        }
        var inputs = SuggestionInputs(), mark: String?
        for (part, version, platform, offset, headMark, bundleId, identifier, habits) in rows {
            if part == 0 {
                inputs.version = version ?? 0
                inputs.platform = platform
                inputs.latestUTCOffsetMinutes = offset.map(Int.init)
                mark = headMark
                continue
            }
            guard let bundleId, let identifier, let habits else { throw StoreError.corruptRow("a shortcut's sums came without their key") }
            let shortcut = ShortcutID(bundleId: bundleId, identifier: identifier)
            // In both orders, it is read twice: decoded once.
            if inputs.candidates[shortcut] == nil { inputs.candidates[shortcut] = try ShortcutHabits(stored: habits) }
        }
        guard let suggestionCache, let mark else { return inputs }
        if let kept, kept.mark == mark {
            suggestionCache.took(key)
            inputs.candidates = kept.candidates
            inputs.fromKeptSums = true
        } else {
            suggestionCache.keep(inputs.candidates, for: key, at: mark)
        }
        return inputs
    }

    /// The titles of `shortcuts` (their latest donation's), one statement naming the account;
    /// a shortcut that left the view meanwhile has none.
    public func suggestionTitles(account: UUID, shortcuts: [ShortcutID]) async throws -> [ShortcutID: String] {
        guard !shortcuts.isEmpty else { return [:] }
        let rows = try await client.guardedQuery("""
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

    /// What the account learned of `shortcut` (its sums per device; empty when nothing), when it
    /// is in `device`'s view: not removed, and of an app the device has (any, when it reported
    /// none). Nil when it is not.
    public func habits(account: UUID, device: UUID, shortcut: ShortcutID) async throws -> ShortcutHabits? {
        let rows = try await client.guardedQuery("""
            SELECT s.habits FROM projection_shortcuts s
            WHERE s.account_id = \(account) AND s.bundle_id = \(shortcut.bundleId) AND s.identifier = \(shortcut.identifier)
              AND s.view IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM projection_devices d
                              WHERE d.account_id = \(account) AND d.device_id = \(device) AND NOT (s.bundle_id = ANY(d.installed)))
            """, logger: logger)
        for try await habits in rows.decode(ByteBuffer?.self) {
            return try habits.map(ShortcutHabits.init(stored:)) ?? ShortcutHabits()
        }
        return nil
    }

    /// The account's learning rules as folded (`LearningRules`): its and its devices' forgets,
    /// pauses and sign-outs, with every shortcut's forget (kept beside the deletion marks).
    public func learningRules(account: UUID) async throws -> LearningRules {
        var rules = LearningRules()
        let rows = try await client.guardedQuery("""
            SELECT a.learning FROM projection_accounts a WHERE a.account_id = \(account)
            """, logger: logger)
        for try await stored in rows.decode(ByteBuffer?.self) {
            if let stored { rules = try LearningRules(stored: stored) }
        }
        let marks = try await client.guardedQuery("""
            SELECT m.bundle_id, m.value, m.key FROM projection_deletion_marks m
            WHERE m.account_id = \(account) AND m.scope = \(StoredScopes.forget)
            """, logger: logger)
        for try await (bundleId, identifier, key) in marks.decode((String, String, ByteBuffer).self) {
            rules.add(forgotten: ShortcutID(bundleId: bundleId, identifier: identifier), at: try EventKey(stored: key))
        }
        return rules
    }

    /// Everything the account learned: each shortcut's sums per device, for an export.
    public func allHabits(account: UUID) async throws -> [(shortcut: ShortcutID, habits: ShortcutHabits)] {
        let rows = try await client.guardedQuery("""
            SELECT s.bundle_id, s.identifier, s.habits FROM projection_shortcuts s
            WHERE s.account_id = \(account) AND s.habits IS NOT NULL AND s.view IS NOT NULL
            ORDER BY s.bundle_id, s.identifier
            """, logger: logger)
        var learned: [(shortcut: ShortcutID, habits: ShortcutHabits)] = []
        for try await (bundleId, identifier, habits) in rows.decode((String, String, ByteBuffer).self) {
            learned.append((ShortcutID(bundleId: bundleId, identifier: identifier), try ShortcutHabits(stored: habits)))
        }
        return learned
    }
}

/// `suggestionInputs`' statement: `$1` the account, `$2` the device, `$3` whether the offset is
/// read, `$4` the offset's window, `$5` the reach, `$6` the candidates, `$7` the kept mark (NULL:
/// none). Its first row is the head's (part 0), the others the candidates' (part 1).
struct SuggestionInputsStatement: PostgresPreparedStatement {
    typealias Row = (Int16, Int64?, String?, Int32?, String?, String?, String?, ByteBuffer?)
    static let name = "Suggestions.inputs"
    static let sql = """
        WITH head AS MATERIALIZED (
            SELECT coalesce((SELECT a.version FROM projection_accounts a WHERE a.account_id = $1), 0) AS version,
                   (SELECT d.platform FROM devices d WHERE d.account_id = $1 AND d.device_id = $2) AS platform,
                   (SELECT (l.body->>'utcOffsetMinutes')::int4
                    FROM (SELECT e.type, e.body FROM events e
                          WHERE e.account_id = $1 AND e.device_id = $2 AND $3
                          ORDER BY e.seq DESC LIMIT $4) l
                    WHERE l.type = 'donation' LIMIT 1) AS utc_offset,
                   (SELECT \(AccountHead.markSQL) FROM account_heads h WHERE h.account_id = $1) AS mark
        ), i AS MATERIALIZED (
            SELECT (SELECT d.installed FROM projection_devices d WHERE d.account_id = $1 AND d.device_id = $2) AS installed
        )
        SELECT 0::int2, head.version, head.platform, head.utc_offset, head.mark, NULL::text, NULL::text, NULL::bytea FROM head
        UNION ALL
        (SELECT 1::int2, NULL::int8, NULL::text, NULL::int4, NULL::text, s.bundle_id, s.identifier, s.habits
         FROM (SELECT s.bundle_id, s.identifier, s.habits, s.donations, s.latest_key FROM projection_shortcuts s
               WHERE s.account_id = $1 AND s.habits IS NOT NULL
               ORDER BY s.donations DESC, s.latest_key DESC LIMIT $5) s
         WHERE (SELECT head.mark IS DISTINCT FROM $7 FROM head)
           AND (SELECT i.installed IS NULL OR s.bundle_id = ANY(i.installed) FROM i)
         ORDER BY s.donations DESC, s.latest_key DESC LIMIT $6)
        UNION ALL
        (SELECT 1::int2, NULL::int8, NULL::text, NULL::int4, NULL::text, s.bundle_id, s.identifier, s.habits
         FROM (SELECT s.bundle_id, s.identifier, s.habits, s.latest_key FROM projection_shortcuts s
               WHERE s.account_id = $1 AND s.habits IS NOT NULL
               ORDER BY s.latest_key DESC LIMIT $5) s
         WHERE (SELECT head.mark IS DISTINCT FROM $7 FROM head)
           AND (SELECT i.installed IS NULL OR s.bundle_id = ANY(i.installed) FROM i)
         ORDER BY s.latest_key DESC LIMIT $6)
        """
    static var bindingDataTypes: [PostgresDataType] { [.uuid, .uuid, .bool, .int8, .int8, .int8, .text] }

    var account: UUID
    var device: UUID
    var latestOffset: Bool
    var candidates: Int
    var reach: Int
    var keptMark: String?

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 7)
        bindings.append(account)
        bindings.append(device)
        bindings.append(latestOffset)
        bindings.append(Int64(ProjectionStore.offsetWindow))
        bindings.append(Int64(reach))
        bindings.append(Int64(candidates))
        bindings.append(keptMark)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}

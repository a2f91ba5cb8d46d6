import Foundation
import PostgresNIO
import ShortcutSyncDomain

extension ProjectionRowStore {
    /// How many shortcuts the account's view holds, read in the caller's transaction (the rows a
    /// push just wrote included): what `PostgresEventStore.maximumShortcuts` bounds (DESIGN §5).
    public func shortcutCount(account: UUID, on connection: PostgresConnection) async throws -> Int {
        let rows = try await connection.guardedQuery("""
            SELECT count(*) FROM \(unescaped: tables.prefix)projection_shortcuts WHERE account_id = \(account) AND view IS NOT NULL
            """, logger: logger)
        return Int(try await rows.decode(Int64.self).collectAll().first ?? 0)
    }

    /// How many shortcuts the account's view will hold once `result` (a fold not yet written) is:
    /// those it holds now, less those of `result` it holds now, plus those `result` keeps in it.
    /// (A push that adds a shortcut asks it: a prepared statement, `ShortcutCountStatement`.)
    func shortcutCount(account: UUID, after result: AccountBatchResult, on connection: PostgresConnection) async throws -> Int {
        let keys = Array(result.shortcuts.keys)
        let counted = switch tables {
        case .live: try await connection.guardedExecute(ShortcutCountStatement<LiveProjectionTables>(account: account, keys: keys), logger: logger)
        case .rebuild: try await connection.guardedExecute(ShortcutCountStatement<RebuildProjectionTables>(account: account, keys: keys), logger: logger)
        }
        let (held, changing) = counted.first ?? (0, 0)
        return Int(held) - Int(changing) + result.shortcuts.values.filter { $0 != nil }.count
    }

    /// Of `keys` (the shortcuts a push donates to), those the account's view does not hold, and
    /// how many it holds: the bound of a push that cannot fold (its account is behind), checked
    /// against the view as folded so far.
    public func shortcutHeadroom(account: UUID, keys: [ShortcutID], on connection: PostgresConnection) async throws -> (existing: Int, new: Set<ShortcutID>) {
        // One row whatever the batch holds: an aggregate without GROUP BY always answers one.
        let rows = try await connection.guardedQuery("""
            SELECT (SELECT count(*) FROM \(unescaped: tables.prefix)projection_shortcuts WHERE account_id = \(account) AND view IS NOT NULL),
                   coalesce(array_agg(k.bundle_id), '{}'), coalesce(array_agg(k.identifier), '{}')
            FROM unnest(\(keys.map(\.bundleId))::text[], \(keys.map(\.identifier))::text[]) AS k(bundle_id, identifier)
            WHERE NOT EXISTS (
                SELECT 1 FROM \(unescaped: tables.prefix)projection_shortcuts p
                WHERE p.account_id = \(account) AND p.bundle_id = k.bundle_id AND p.identifier = k.identifier AND p.view IS NOT NULL)
            """, logger: logger)
        var existing = 0
        var new: Set<ShortcutID> = []
        for try await (count, bundleIds, identifiers) in rows.decode((Int64, [String], [String]).self) {
            existing = Int(count)
            new = Set(zip(bundleIds, identifiers).map { ShortcutID(bundleId: $0, identifier: $1) })
        }
        return (existing, new)
    }

    /// The donation groups the account's folded view holds of each of `keys`: the bound on groups
    /// per shortcut of a push that cannot fold (its account is behind).
    public func donationGroups(account: UUID, of keys: [ShortcutID], on connection: PostgresConnection) async throws -> [ShortcutID: Set<String>] {
        let rows = try await connection.guardedQuery("""
            SELECT g.bundle_id, g.identifier, g.group_id
            FROM unnest(\(keys.map(\.bundleId))::text[], \(keys.map(\.identifier))::text[]) AS k(bundle_id, identifier)
            JOIN \(unescaped: tables.prefix)projection_donation_groups g
              ON g.account_id = \(account) AND g.bundle_id = k.bundle_id AND g.identifier = k.identifier
            """, logger: logger)
        var groups: [ShortcutID: Set<String>] = [:]
        for try await (bundleId, identifier, group) in rows.decode((String, String, String).self) {
            groups[ShortcutID(bundleId: bundleId, identifier: identifier), default: []].insert(group)
        }
        return groups
    }
}

/// How many shortcuts an account's view holds, and how many of `keys` among them: one row.
struct ShortcutCountStatement<Tables: ProjectionTableSet>: PostgresPreparedStatement {
    static var sql: String { Tables.shortcutCountSQL }
    static var name: String { Tables.shortcutCountName }
    static var bindingDataTypes: [PostgresDataType] { [.uuid, .textArray, .textArray] }

    /// For the live tables; each set keeps its own, made once (`ProjectionTableSet.shortcutCountSQL`).
    static var text: String {
        """
        SELECT count(*), count(*) FILTER (WHERE (p.bundle_id, p.identifier) IN (SELECT * FROM unnest($2::text[], $3::text[])))
        FROM projection_shortcuts p WHERE p.account_id = $1 AND p.view IS NOT NULL
        """
    }

    var account: UUID
    var keys: [ShortcutID]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(account)
        bindings.append(keys.map(\.bundleId))
        bindings.append(keys.map(\.identifier))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> (Int64, Int64) {
        try row.decode((Int64, Int64).self)
    }
}

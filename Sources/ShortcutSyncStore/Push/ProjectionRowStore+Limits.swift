import Foundation
import PostgresNIO
import ShortcutSyncDomain

extension ProjectionRowStore {
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

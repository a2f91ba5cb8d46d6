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
}

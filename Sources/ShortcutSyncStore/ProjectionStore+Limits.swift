import Foundation
import PostgresNIO
import ShortcutSyncDomain

extension ProjectionStore {
    /// Of `keys` (the shortcuts a push donates to), those the account's projected view does not
    /// hold yet, and how many shortcuts it holds: what `Limits.maxShortcutsPerAccount` is
    /// checked against before a push is appended (DESIGN §5).
    ///
    /// The view is the folded one: events appended and not yet folded are not counted, so the
    /// bound holds up to the fold's lag (until the push folds its own events, DESIGN §6).
    public func shortcutHeadroom(account: UUID, keys: [ShortcutID]) async throws -> (existing: Int, new: Set<ShortcutID>) {
        // One row whatever the batch holds: an aggregate without GROUP BY always answers one.
        let rows = try await client.query("""
            SELECT (SELECT count(*) FROM projection_shortcuts WHERE account_id = \(account) AND view IS NOT NULL),
                   coalesce(array_agg(k.bundle_id), '{}'), coalesce(array_agg(k.identifier), '{}')
            FROM unnest(\(keys.map(\.bundleId))::text[], \(keys.map(\.identifier))::text[]) AS k(bundle_id, identifier)
            WHERE NOT EXISTS (
                SELECT 1 FROM projection_shortcuts p
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

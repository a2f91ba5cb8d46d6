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
        let rows = try await client.query("""
            SELECT (SELECT count(*) FROM projection_shortcuts WHERE account_id = \(account) AND view IS NOT NULL),
                   k.bundle_id, k.identifier
            FROM unnest(\(keys.map(\.bundleId))::text[], \(keys.map(\.identifier))::text[]) AS k(bundle_id, identifier)
            WHERE NOT EXISTS (
                SELECT 1 FROM projection_shortcuts p
                WHERE p.account_id = \(account) AND p.bundle_id = k.bundle_id AND p.identifier = k.identifier AND p.view IS NOT NULL)
            UNION ALL
            SELECT (SELECT count(*) FROM projection_shortcuts WHERE account_id = \(account) AND view IS NOT NULL), NULL, NULL
            """, logger: logger)
        var existing = 0
        var new: Set<ShortcutID> = []
        for try await (count, bundleId, identifier) in rows.decode((Int64, String?, String?).self) {
            existing = Int(count)
            if let bundleId, let identifier { new.insert(ShortcutID(bundleId: bundleId, identifier: identifier)) }
        }
        return (existing, new)
    }
}

import Foundation
import ShortcutSyncDomain

/// The fold arms one prepared push statement holds (`AppendFoldedStatement`). An arm with
/// nothing to write still costs PostgreSQL its table and indexes opened and locked at every run,
/// so the common push, donations alone, runs a statement holding only the arms it writes
/// (`DonationFoldArms`); any other runs them all (`EveryFoldArm`). Each set is its own prepared
/// statement, planned once per connection.
protocol FoldArmSet: Sendable {
    static var arms: [FoldArm] { get }
}

extension FoldArmSet {
    /// Whether this set holds every arm that `result` writes.
    static func holds(_ result: AccountBatchResult) -> Bool {
        FoldArm.writing(result).isSubset(of: arms)
    }
}

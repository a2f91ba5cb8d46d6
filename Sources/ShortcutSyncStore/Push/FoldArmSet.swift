import Foundation
import ShortcutSyncDomain

/// The fold arms one prepared push statement holds (`AppendFoldedStatement`). An arm with
/// nothing to write still costs PostgreSQL its table and indexes opened and locked at every run,
/// so the common push, donations alone, runs a statement holding only the arms it writes
/// (`DonationFoldArms`); any other runs them all (`EveryFoldArm`). Each set is its own prepared
/// statement, planned once per connection.
///
/// PostgresNIO asks a prepared statement for its text at every run: each set keeps its
/// statement's text made once (`appendFoldedSQL`), never assembled per push (a profile of 1-event
/// pushes found a tenth of the service's CPU in assembling it).
protocol FoldArmSet: Sendable {
    static var arms: [FoldArm] { get }
    /// `AppendFoldedStatement<Self>.text`, made once: a `static let` of each set.
    static var appendFoldedSQL: String { get }
    /// The prepared statement's name (PostgresNIO's default, `String(reflecting:)`, is made at every run too).
    static var appendFoldedName: String { get }
}

extension FoldArmSet {
    /// Whether this set holds every arm that `result` writes.
    static func holds(_ result: AccountBatchResult) -> Bool {
        FoldArm.writing(result).isSubset(of: arms)
    }
}

import Foundation

/// Every fold arm: what a push with a deletion, a voice shortcut or an app report writes.
enum EveryFoldArm: FoldArmSet {
    static let arms = FoldArm.allCases
    static let appendFoldedSQL = AppendFoldedStatement<Self>.text
    static let appendFoldedName = "AppendFolded.every"
}

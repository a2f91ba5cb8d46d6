import Foundation

/// What a push of donations alone writes: the account's row, the donation groups and the
/// shortcuts' views.
enum DonationFoldArms: FoldArmSet {
    static let arms: [FoldArm] = [.account, .keptGroups, .shortcuts]
    static let appendFoldedSQL = AppendFoldedStatement<Self>.text
    static let appendFoldedName = "AppendFolded.donations"
}

import Foundation

/// What a push of donations alone writes: the account's row, the donation groups and the
/// shortcuts' views.
enum DonationFoldArms: FoldArmSet {
    static let arms: [FoldArm] = [.account, .keptGroups, .shortcuts]
}

import Foundation

/// The donations of one shortcut that share a `groupIdentifier`: a deletion by group selects
/// them together, so the fold keeps them together.
public struct DonationGroupID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var shortcut: ShortcutID
    /// "" for donations without a group (a real group is never empty).
    public var group: String

    public init(shortcut: ShortcutID, group: String) {
        self.shortcut = shortcut
        self.group = group
    }

    public static func < (lhs: DonationGroupID, rhs: DonationGroupID) -> Bool {
        (lhs.shortcut, lhs.group) < (rhs.shortcut, rhs.group)
    }

    public var description: String { group.isEmpty ? shortcut.description : "\(shortcut) in \(group)" }
}

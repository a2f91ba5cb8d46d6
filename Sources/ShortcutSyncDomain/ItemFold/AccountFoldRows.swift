import Foundation

/// The rows of one account that a batch reads, as stored before it: a subset, chosen by
/// `FoldNeeds`, of everything the account's fold keeps.
public struct AccountFoldRows: Sendable, Hashable {
    /// The account version the stored rows include (its folded version).
    public var version: Int64 = 0
    public var maxHLC: HLCTimestamp = .zero
    public var groups: [DonationGroupID: DonationGroupRow] = [:]
    public var marks: [DeletionScope: EventKey] = [:]
    public var voiceShortcuts: [UUID: VoiceShortcutRow] = [:]
    /// Each device's latest `appsReported`.
    public var devices: [UUID: Stamped<Set<String>>] = [:]
    /// What decides which donations teach the suggestions: the account's and its devices'
    /// rules, with the forgets of the shortcuts read.
    public var learning = LearningRules()
    /// How many shortcuts the account's view holds: kept on its row by every fold (DESIGN §5's
    /// bound is checked against it, without counting the view).
    public var shortcutCount = 0
    /// How far the account's history was compacted, if it was.
    public var horizon: AccountHorizon?

    public init() {}

    /// These rows as the snapshot of a compaction through `horizon`: every donation they count is
    /// compacted (`DonationGroupRow.compacted`).
    public func compacted(through horizon: AccountHorizon) -> AccountFoldRows {
        var rows = self
        rows.horizon = horizon
        rows.groups = groups.mapValues(\.compacted)
        return rows
    }
}

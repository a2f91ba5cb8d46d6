import Foundation

/// What one batch changes for one account.
public struct AccountBatchResult: Sendable, Hashable {
    /// The account version after the batch (its last event's): the version of every row it changes.
    public var version: Int64
    public var maxHLC: HLCTimestamp
    /// The greatest account version of the batch's events.
    public var lastVersion: Int64
    public var viewChanged = false
    /// Whether its devices should be told: the view or a device's apps changed.
    public var notify = false
    /// Donation groups to write; nil: to remove (no uncovered donation left).
    public var groups: [DonationGroupID: DonationGroupRow?] = [:]
    public var marks: [DeletionScope: EventKey] = [:]
    public var voiceShortcuts: [VoiceShortcutChange] = []
    public var devices: [UUID: DeviceAppsChange] = [:]
    /// Projected shortcuts that changed; nil: it left the view.
    public var shortcuts: [ShortcutID: ShortcutProjection?] = [:]
    /// The suggestion sums of every shortcut whose projection or sums changed: its donation
    /// groups' sums together (empty: none). What a suggestions request reads, one row per
    /// shortcut (DESIGN §3). A sign-out changes sums alone: the view stays as it was.
    public var shortcutSums: [ShortcutID: ShortcutHabits] = [:]
    /// Of those, the ones that were not in the view before the batch: what counts against the
    /// account's bound on shortcuts (DESIGN §5).
    public var addedShortcuts: Set<ShortcutID> = []
    /// How many shortcuts the account's view holds after the batch: those before
    /// (`AccountFoldRows.shortcutCount`), with those it added and without those it removed.
    public var shortcutCount = 0
    /// Shortcuts that hold a donation group after the batch that they did not before: what
    /// counts against the bound on groups per shortcut (DESIGN §5).
    public var groupsGained: [ShortcutID: GroupsGained] = [:]
    /// The account's and its devices' learning rules after the batch, when it changed them.
    public var learning: LearningRules?
    /// Forgets of shortcuts the batch raised, kept beside the deletion marks.
    public var forgottenShortcuts: [ShortcutID: EventKey] = [:]
    /// A scope whose pauses and resumes the batch took past `Limits.maxLearningChangesPerScope`.
    public var learningChangesBeyondLimit: LearningScope?
    /// The account's horizon, when an event of the batch was older than it and folded just after
    /// it (`AccountHorizon`): the log must record such an event at that clock.
    public var lateHorizon: AccountHorizon?
}

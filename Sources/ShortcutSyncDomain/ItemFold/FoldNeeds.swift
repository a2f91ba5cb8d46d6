import Foundation

/// Which stored rows of one account a batch of its events reads: every row its events can
/// change, and every row a changed view depends on. Nothing else, so a batch costs what its
/// events touch, never what the account holds.
public struct FoldNeeds: Sendable, Hashable {
    /// An app's group: a deletion by group selects these donations of every shortcut of the app.
    public struct AppGroup: Sendable, Hashable {
        public var bundleId: String
        public var group: String

        public init(bundleId: String, group: String) {
            self.bundleId = bundleId
            self.group = group
        }
    }

    /// Every donation group of these shortcuts.
    public var shortcuts: Set<ShortcutID> = []
    /// Every donation group of each shortcut that has donations in one of these groups.
    public var shortcutsInGroups: Set<AppGroup> = []
    /// Every donation group of these apps.
    public var bundles: Set<String> = []
    public var marks: Set<DeletionScope> = []
    /// These voice shortcuts, and every voice shortcut that shares the phrase one of them has now.
    public var voiceShortcuts: Set<UUID> = []
    /// Every voice shortcut whose normalized phrase is one of these.
    public var phrases: Set<String> = []
    /// Devices whose latest `appsReported` the batch reads.
    public var devices: Set<UUID> = []
    /// Every donation group of the account (a device was signed out, or the learning of the
    /// account or of a device was forgotten, paused or resumed: any group's sums may change).
    public var everyGroup = false
    /// Shortcuts whose forget (`LearningRules`) the batch reads: those it donates or forgets.
    public var forgottenShortcuts: Set<ShortcutID> = []
    /// Each phrase of the batch, normalized once (the fold takes them from here).
    public private(set) var normalizedPhrases: [String: String] = [:]
    /// Donation groups already seen, so repeated donations cost one lookup.
    private var donated: Set<DonationGroupID> = []

    public init() {}

    public init(events: some Sequence<FoldEvent>) {
        for event in events { add(event) }
    }

    public mutating func add(_ event: FoldEvent) {
        switch event.change {
        case .donation(let shortcut, let group):
            let id = DonationGroupID(shortcut: shortcut, group: group)
            guard donated.insert(id).inserted else { return }
            shortcuts.insert(shortcut)
            forgottenShortcuts.insert(shortcut)
            marks.formUnion(DeletionScope.selecting(id))
        case .deletion(let deletion):
            let raised = DeletionScope.raised(by: deletion)
            marks.formUnion(raised)
            for scope in raised {
                switch scope {
                case .identifier(let shortcut): shortcuts.insert(shortcut)
                case .group(let bundleId, let group): shortcutsInGroups.insert(AppGroup(bundleId: bundleId, group: group))
                case .all(let bundleId): bundles.insert(bundleId)
                }
            }
        case .voiceShortcutAdded(let added):
            voiceShortcuts.insert(added.voiceShortcutId)
            phrases.insert(normalize(added.phrase))
            // Whether its shortcut exists decides `targetAvailable`.
            shortcuts.insert(ShortcutID(bundleId: added.bundleId, identifier: added.identifier))
        case .voiceShortcutUpdated(let updated):
            voiceShortcuts.insert(updated.voiceShortcutId)
            phrases.insert(normalize(updated.phrase))
        case .voiceShortcutDeleted(let id):
            voiceShortcuts.insert(id)
        case .appsReported:
            devices.insert(event.key.deviceId)
        case .signedOut:
            everyGroup = true
        case .learningForgotten(.shortcut(let shortcut)):
            shortcuts.insert(shortcut)
            forgottenShortcuts.insert(shortcut)
        case .learningForgotten, .learningPaused:
            everyGroup = true
        }
    }

    private mutating func normalize(_ phrase: String) -> String {
        if let normalized = normalizedPhrases[phrase] { return normalized }
        let normalized = PhraseNormalizer.normalize(phrase)
        normalizedPhrases[phrase] = normalized
        return normalized
    }

    /// Voice shortcuts bound to a shortcut whose existence the batch may change are read too
    /// (their `targetAvailable` may flip): those bound to `shortcuts`, or to any shortcut of
    /// these apps (deletions by group and all select shortcuts the batch does not name).
    public var voiceTargetBundles: Set<String> {
        bundles.union(shortcutsInGroups.map(\.bundleId))
    }
}

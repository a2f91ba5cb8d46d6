import Foundation

/// The account's whole view, computed from the fold's state; each device sees it filtered by its apps.
struct AccountView {
    let state: AccountState
    let shortcuts: [ShortcutID: ShortcutView]
    /// Existing voice shortcuts with status and owner resolved; `appInstalled` is filled per device.
    let voiceShortcuts: [UUID: VoiceShortcutView]

    init(_ state: AccountState) {
        self.state = state
        shortcuts = state.shortcutViews
        var existing: [(id: UUID, target: VoiceShortcutAdded, phrase: Stamped<String>, normalized: String)] = []
        for (id, voice) in state.voiceShortcuts where !voice.deleted {
            guard let target = voice.target, let phrase = voice.phrase, let normalized = voice.normalizedPhrase else { continue }
            existing.append((id, target.value, phrase, normalized))
        }
        // The voice shortcut whose current phrase was set by the smallest key owns the phrase.
        var owners: [String: (id: UUID, key: EventKey)] = [:]
        for voice in existing {
            if let owner = owners[voice.normalized], owner.key < voice.phrase.key { continue }
            owners[voice.normalized] = (voice.id, voice.phrase.key)
        }
        var views: [UUID: VoiceShortcutView] = [:]
        for voice in existing {
            let owner = owners[voice.normalized]!.id
            let target = ShortcutID(bundleId: voice.target.bundleId, identifier: voice.target.identifier)
            views[voice.id] = VoiceShortcutView(
                voiceShortcutId: voice.id, phrase: voice.phrase.value, normalizedPhrase: voice.normalized,
                bundleId: voice.target.bundleId, identifier: voice.target.identifier, title: voice.target.title,
                status: owner == voice.id ? .active : .phraseConflict,
                conflictsWith: owner == voice.id ? nil : owner,
                targetAvailable: state.shortcutExists(target), appInstalled: true)
        }
        voiceShortcuts = views
    }

    /// The account's whole view.
    var whole: DeviceView {
        DeviceView(shortcuts: shortcuts, voiceShortcuts: voiceShortcuts)
    }
}

import Foundation

/// Everything one device sees.
public struct DeviceView: Sendable, Hashable {
    public var shortcuts: [ShortcutID: ShortcutView]
    public var voiceShortcuts: [UUID: VoiceShortcutView]

    public init(shortcuts: [ShortcutID: ShortcutView] = [:], voiceShortcuts: [UUID: VoiceShortcutView] = [:]) {
        self.shortcuts = shortcuts
        self.voiceShortcuts = voiceShortcuts
    }

    public static let empty = DeviceView()

    /// What changed from `old` to this view: applying it to `old` gives this view exactly.
    public func changes(since old: DeviceView) -> ViewChanges {
        var changes = ViewChanges()
        for (id, view) in shortcuts where old.shortcuts[id] != view {
            changes.upsertedShortcuts.append(view)
        }
        for id in old.shortcuts.keys where shortcuts[id] == nil {
            changes.removedShortcuts.append(id)
        }
        for (id, view) in voiceShortcuts where old.voiceShortcuts[id] != view {
            changes.upsertedVoiceShortcuts.append(view)
        }
        for id in old.voiceShortcuts.keys where voiceShortcuts[id] == nil {
            changes.removedVoiceShortcuts.append(id)
        }
        return changes
    }

    /// This view with `changes` applied, as a device applies a pull answer.
    public func applying(_ changes: ViewChanges) -> DeviceView {
        var result = self
        for id in changes.removedShortcuts { result.shortcuts[id] = nil }
        for view in changes.upsertedShortcuts { result.shortcuts[view.shortcutID] = view }
        for id in changes.removedVoiceShortcuts { result.voiceShortcuts[id] = nil }
        for view in changes.upsertedVoiceShortcuts { result.voiceShortcuts[view.voiceShortcutId] = view }
        return result
    }
}

extension DeviceView {
    /// What a device sees of the account's whole view (DESIGN §3): with `installed` nil (it never
    /// reported its apps) everything; otherwise only the shortcuts of apps it has, and every voice
    /// shortcut with `appInstalled` saying whether it has the target's app.
    ///
    /// The projections keep one row per item and account, and pulls apply this per device.
    public func visible(toDeviceWith installed: Set<String>?) -> DeviceView {
        guard let installed else { return self }
        var voices = voiceShortcuts
        for (id, voice) in voices { voices[id]?.appInstalled = installed.contains(voice.bundleId) }
        return DeviceView(shortcuts: shortcuts.filter { installed.contains($0.key.bundleId) }, voiceShortcuts: voices)
    }
}

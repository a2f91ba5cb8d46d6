import Foundation

/// The difference between two views of one device, in the shape of a pull answer.
public struct ViewChanges: Sendable, Hashable {
    public var upsertedShortcuts: [ShortcutView] = []
    public var removedShortcuts: [ShortcutID] = []
    public var upsertedVoiceShortcuts: [VoiceShortcutView] = []
    public var removedVoiceShortcuts: [UUID] = []

    public init() {}

    public var isEmpty: Bool {
        upsertedShortcuts.isEmpty && removedShortcuts.isEmpty && upsertedVoiceShortcuts.isEmpty && removedVoiceShortcuts.isEmpty
    }
}

extension ViewChanges {
    /// The same changes of the account's whole view, as a device with `installed` apps (nil:
    /// never reported) sees them: applied to its view before, they give its view after, as long
    /// as its apps did not change in between (a cursor carries the device's app-set version).
    public func visible(toDeviceWith installed: Set<String>?) -> ViewChanges {
        guard let installed else { return self }
        var visible = ViewChanges()
        visible.upsertedShortcuts = upsertedShortcuts.filter { installed.contains($0.bundleId) }
        visible.removedShortcuts = removedShortcuts.filter { installed.contains($0.bundleId) }
        visible.upsertedVoiceShortcuts = upsertedVoiceShortcuts.map { voice in
            var voice = voice
            voice.appInstalled = installed.contains(voice.bundleId)
            return voice
        }
        visible.removedVoiceShortcuts = removedVoiceShortcuts
        return visible
    }
}

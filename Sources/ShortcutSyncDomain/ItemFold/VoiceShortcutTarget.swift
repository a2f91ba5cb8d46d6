import Foundation

/// What a voice shortcut is bound to: its latest `voiceShortcutAdded` without the phrase (which
/// has a key of its own: updates change it).
public struct VoiceShortcutTarget: Sendable, Hashable {
    public var bundleId: String
    public var identifier: String
    public var title: String

    public init(bundleId: String, identifier: String, title: String) {
        self.bundleId = bundleId
        self.identifier = identifier
        self.title = title
    }

    public init(_ added: VoiceShortcutAdded) {
        self.init(bundleId: added.bundleId, identifier: added.identifier, title: added.title)
    }

    public var shortcut: ShortcutID { ShortcutID(bundleId: bundleId, identifier: identifier) }
}

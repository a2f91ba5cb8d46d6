import Foundation

/// A voice shortcut row to write back; its projected view changed only if `viewChanged`.
public struct VoiceShortcutChange: Sendable, Hashable {
    public var row: VoiceShortcutRow
    public var viewChanged: Bool
}

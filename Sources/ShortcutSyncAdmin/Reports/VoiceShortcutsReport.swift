import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

public struct VoiceShortcutsReport: AdminReport {
    public var accountId: UUID
    public var voiceShortcuts: [VoiceShortcutView]

    public var text: String { Self.table(voiceShortcuts) }

    static func table(_ voiceShortcuts: [VoiceShortcutView]) -> String {
        var table = TextTable([.init("VOICE SHORTCUT", maxWidth: 36), .init("PHRASE", maxWidth: 30), .init("SHORTCUT", maxWidth: 40),
                               .init("STATUS"), .init("CONFLICTS WITH", maxWidth: 36), .init("TARGET")])
        for voice in voiceShortcuts {
            table.append([voice.voiceShortcutId.lowercased, voice.phrase, voice.target.description, voice.status.rawValue,
                          voice.conflictsWith?.lowercased ?? "-", voice.targetAvailable ? "available" : "unavailable"])
        }
        return table.rendered
    }
}

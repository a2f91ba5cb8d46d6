import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

public struct ShortcutsReport: AdminReport {
    public var accountId: UUID
    public var deviceId: UUID
    /// "projections" for the view now, "replay" for a view of the past folded from the log.
    public var source: String
    /// The prefix of the account's log replayed: every event at a version up to `atVersion`
    /// (the view at that account version), or recorded up to `asOf`.
    public var atVersion: Int64?
    public var asOf: Date?
    /// How many events the replay folded.
    public var eventsReplayed: Int?
    public var shortcuts: [ShortcutView]
    public var voiceShortcuts: [VoiceShortcutView]

    public init(accountId: UUID, deviceId: UUID, source: String, atVersion: Int64? = nil, asOf: Date? = nil,
                eventsReplayed: Int? = nil, view: DeviceView) {
        self.accountId = accountId
        self.deviceId = deviceId
        self.source = source
        self.atVersion = atVersion
        self.asOf = asOf
        self.eventsReplayed = eventsReplayed
        shortcuts = view.shortcuts.values.sorted { $0.shortcutID < $1.shortcutID }
        voiceShortcuts = view.voiceShortcuts.values.sorted { ($0.phrase, $0.voiceShortcutId.uuidString) < ($1.phrase, $1.voiceShortcutId.uuidString) }
    }

    public var text: String {
        var heading = "device \(deviceId.lowercased) of account \(accountId.lowercased)"
        if let atVersion { heading += ", replayed through version \(atVersion)" }
        if let asOf { heading += ", replayed as of \(LocalTime.format(asOf))" }
        if let eventsReplayed { heading += " (\(eventsReplayed) events)" }
        var table = TextTable([.init("SHORTCUT", maxWidth: 40), .init("TITLE", maxWidth: 30), .init("GROUP", maxWidth: 20),
                               .init("DONATIONS", alignRight: true), .init("LAST DONATED")])
        for shortcut in shortcuts {
            table.append([shortcut.shortcutID.description, shortcut.title, shortcut.groupIdentifier ?? "-", "\(shortcut.donationCount)",
                          LocalTime.format(Date(timeIntervalSince1970: Double(shortcut.lastDonatedAt.wallMillis) / 1000))])
        }
        var text = heading + "\n\n" + table.rendered
        if !voiceShortcuts.isEmpty {
            text += "\n" + VoiceShortcutsReport.table(voiceShortcuts)
        }
        return text
    }
}

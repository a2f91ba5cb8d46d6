import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

/// What an `admin` command answers: a text for people and, encoded, JSON for scripts. The
/// JSON field names are the ones the README documents; they only ever grow.
public protocol AdminReport: Encodable, Sendable {
    var text: String { get }
}

public struct AccountsReport: AdminReport {
    public struct Account: Encodable, Sendable, Hashable {
        public var accountId: UUID
        public var createdAt: Date
        public var devices: Int
        public var events: Int64
        public var lastEventAt: Date?
    }

    public var accounts: [Account]

    public var text: String {
        var table = TextTable([.init("ACCOUNT", maxWidth: 36), .init("CREATED"), .init("DEVICES", alignRight: true),
                               .init("EVENTS", alignRight: true), .init("LAST EVENT")])
        for account in accounts {
            table.append([account.accountId.lowercased, LocalTime.format(account.createdAt), "\(account.devices)",
                          "\(account.events)", LocalTime.format(account.lastEventAt)])
        }
        return table.rendered
    }
}

public struct DevicesReport: AdminReport {
    public struct Device: Encodable, Sendable, Hashable {
        public var deviceId: UUID
        public var name: String
        public var platform: String
        public var createdAt: Date
        /// When it signed out (its token stopped working), if it did.
        public var revokedAt: Date?
        public var events: Int64
        public var lastAcceptedSeq: Int64
        public var lastEventAt: Date?
        /// The apps it reported last; nil if it never reported (it sees every app's items).
        public var installedApps: [String]?
    }

    public var accountId: UUID
    public var devices: [Device]

    public var text: String {
        var table = TextTable([.init("DEVICE", maxWidth: 36), .init("NAME", maxWidth: 24), .init("PLATFORM"),
                               .init("EVENTS", alignRight: true), .init("LAST SEQ", alignRight: true), .init("LAST EVENT"),
                               .init("APPS"), .init("STATUS")])
        for device in devices {
            table.append([device.deviceId.lowercased, device.name, device.platform, "\(device.events)", "\(device.lastAcceptedSeq)",
                          LocalTime.format(device.lastEventAt), device.installedApps.map { "\($0.count) reported" } ?? "all",
                          device.revokedAt == nil ? "signed in" : "signed out"])
        }
        return table.rendered
    }
}

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

public struct ShortcutsReport: AdminReport {
    public var accountId: UUID
    public var deviceId: UUID
    /// "projections" for the view now, "replay" for a view of the past folded from the log.
    public var source: String
    /// The prefix of the log replayed: every event at a position up to `atPosition`, or
    /// recorded up to `asOf`.
    public var atPosition: Int64?
    public var asOf: Date?
    /// How many events the replay folded.
    public var eventsReplayed: Int?
    public var shortcuts: [ShortcutView]
    public var voiceShortcuts: [VoiceShortcutView]

    public init(accountId: UUID, deviceId: UUID, source: String, atPosition: Int64? = nil, asOf: Date? = nil,
                eventsReplayed: Int? = nil, view: DeviceView) {
        self.accountId = accountId
        self.deviceId = deviceId
        self.source = source
        self.atPosition = atPosition
        self.asOf = asOf
        self.eventsReplayed = eventsReplayed
        shortcuts = view.shortcuts.values.sorted { $0.shortcutID < $1.shortcutID }
        voiceShortcuts = view.voiceShortcuts.values.sorted { ($0.phrase, $0.voiceShortcutId.uuidString) < ($1.phrase, $1.voiceShortcutId.uuidString) }
    }

    public var text: String {
        var heading = "device \(deviceId.lowercased) of account \(accountId.lowercased)"
        if let atPosition { heading += ", replayed through position \(atPosition)" }
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

/// One event as `admin events` and `admin history` show it.
public struct EventRow: Encodable, Sendable, Hashable {
    public var position: Int64
    public var recordedAt: Date
    public var deviceId: UUID
    public var streamVersion: Int64
    /// The event as the device pushed it (DESIGN §2).
    public var event: Event

    public init(_ recorded: RecordedEvent) {
        position = recorded.position
        recordedAt = recorded.recordedAt
        deviceId = recorded.deviceId
        streamVersion = recorded.streamVersion
        event = recorded.event
    }

    static let columns: [TextTable.Column] = [
        .init("POSITION", alignRight: true), .init("RECORDED"), .init("DEVICE", maxWidth: 8), .init("SEQ", alignRight: true),
        .init("TYPE"), .init("WHAT", maxWidth: 60),
    ]

    var cells: [String] {
        [String(position), LocalTime.format(recordedAt), deviceId.short, String(event.seq), event.type.rawValue, event.body.summary]
    }
}

public struct EventsReport: AdminReport {
    public var events: [EventRow]
    /// More events match after this page (DESIGN §7: a page says when more follow).
    public var more = false
    /// When `more`: the position to pass as `--after` for the next page (the page's last event's).
    public var nextAfter: Int64?

    /// The header of `--follow`, whose lines come one by one: fixed widths instead of a table's.
    public static var followHeader: String {
        fixed(EventRow.columns.map(\.title)) + "\n"
    }

    /// One event of `--follow`.
    public static func line(_ row: EventRow) -> String {
        fixed(row.cells) + "\n"
    }

    private static let widths = [9, 19, 8, 6, 20]

    private static func fixed(_ cells: [String]) -> String {
        var line = ""
        for (index, cell) in cells.enumerated() {
            guard index < widths.count else { line += TextTable.shorten(cell, to: 80); break }
            let value = TextTable.shorten(cell, to: widths[index])
            let padding = String(repeating: " ", count: widths[index] - value.count)
            line += (EventRow.columns[index].alignRight ? padding + value : value + padding) + "  "
        }
        return line.trimmingTrailingSpaces
    }

    public var text: String {
        var table = TextTable(EventRow.columns)
        for event in events { table.append(event.cells) }
        guard more, let nextAfter else { return table.rendered }
        return table.rendered + "More events follow: run the command again with --after \(nextAfter).\n"
    }
}

public struct HistoryReport: AdminReport {
    public struct Effect: Encodable, Sendable, Hashable {
        public var kind: String
        public var description: String
    }

    public struct Entry: Encodable, Sendable, Hashable {
        public var position: Int64
        public var recordedAt: Date
        public var deviceId: UUID
        public var type: EventType
        public var effects: [Effect]
    }

    public var accountId: UUID
    public var shortcut: String
    public var entries: [Entry]

    public var text: String {
        var table = TextTable([.init("POSITION", alignRight: true), .init("RECORDED"), .init("DEVICE", maxWidth: 8), .init("TYPE"),
                               .init("EFFECT", maxWidth: 120)])
        for entry in entries {
            table.append([String(entry.position), LocalTime.format(entry.recordedAt), entry.deviceId.short, entry.type.rawValue,
                          entry.effects.map(\.description).joined(separator: "; ")])
        }
        return "\(shortcut) in account \(accountId.lowercased)\n\n" + table.rendered
    }
}

public struct StatusReport: AdminReport {
    public struct Holder: Encodable, Sendable, Hashable {
        public var pid: Int32
        public var applicationName: String
        public var state: String
        public var ageSeconds: Double
    }

    public var checkpointTransactionId: UInt64
    public var checkpointPosition: Int64
    public var epoch: Int64
    public var headPosition: Int64
    public var pendingEvents: Int64
    public var lagSeconds: Double
    public var parkedAccounts: Int64
    public var eventsBehindHorizon: Int64
    public var horizonHolder: Holder?

    init(_ report: ProjectionStatusReport) {
        checkpointTransactionId = report.checkpoint.log.transactionID
        checkpointPosition = report.checkpoint.log.position
        epoch = report.checkpoint.epoch
        headPosition = report.headPosition
        pendingEvents = report.pendingEvents
        lagSeconds = report.lagSeconds
        parkedAccounts = report.parkedAccounts
        eventsBehindHorizon = report.eventsBehindHorizon
        horizonHolder = report.horizonHolder.map {
            Holder(pid: $0.pid, applicationName: $0.applicationName, state: $0.state, ageSeconds: $0.ageSeconds)
        }
    }

    public var text: String {
        var lines = [
            "checkpoint       position \(checkpointPosition) (transaction \(checkpointTransactionId)), epoch \(epoch)",
            "head             position \(headPosition)",
            "lag              \(plural(Int(pendingEvents), "event")), \(String(format: "%.1f", lagSeconds)) s",
            "parked accounts  \(parkedAccounts)",
        ]
        if eventsBehindHorizon > 0 {
            var line = "horizon          held back: \(plural(Int(eventsBehindHorizon), "committed event")) \(eventsBehindHorizon == 1 ? "waits" : "wait") for an older open transaction"
            if let holder = horizonHolder {
                line += "\n                 pid \(holder.pid), application \"\(holder.applicationName)\", open \(String(format: "%.1f", holder.ageSeconds)) s, \(holder.state)"
            }
            lines.append(line)
        } else {
            lines.append("horizon          not held back")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

public struct VerifyReport: AdminReport {
    public struct Difference: Encodable, Sendable, Hashable {
        public var kind: String
        public var accountId: UUID
        public var key: String
        public var live: String?
        public var rebuilt: String?
    }

    public var checkpointTransactionId: UInt64
    public var checkpointPosition: Int64
    public var consistent: Bool
    public var differences: [Difference]

    init(_ verification: ProjectionVerification) {
        checkpointTransactionId = verification.checkpoint.transactionID
        checkpointPosition = verification.checkpoint.position
        consistent = verification.isConsistent
        differences = verification.differences.map {
            Difference(kind: $0.kind.rawValue, accountId: $0.accountId, key: $0.key, live: $0.live, rebuilt: $0.rebuilt)
        }
    }

    public var text: String {
        guard !consistent else {
            return "The live projections equal a replay of the log at position \(checkpointPosition).\n"
        }
        var text = "\(differences.count) difference\(differences.count == 1 ? "" : "s") between the live projections and a replay of the log at position \(checkpointPosition):\n"
        for difference in differences {
            text += "  \(difference.kind) \(difference.accountId.lowercased) \(difference.key)\n"
            text += "    live:    \(difference.live ?? "absent")\n"
            text += "    rebuilt: \(difference.rebuilt ?? "absent")\n"
        }
        return text
    }
}

public struct RebuildReport: AdminReport {
    public var eventsReplayed: Int
    public var checkpointPosition: Int64
    public var seconds: Double

    public var text: String {
        "Rebuilt the projections from \(eventsReplayed) events in \(String(format: "%.1f", seconds)) s; they are live from position \(checkpointPosition) on (every device's next pull gets its whole view).\n"
    }
}

public struct ImportReport: AdminReport {
    public var accountId: UUID
    public var accountsAdded: Int
    public var devicesAdded: Int
    public var eventsAdded: Int
    public var eventsAlreadyStored: Int

    public var text: String {
        let added = [accountsAdded > 0 ? "the account" : nil, devicesAdded > 0 ? plural(devicesAdded, "device") : nil,
                     eventsAdded > 0 ? plural(eventsAdded, "event") : nil].compactMap { $0 }
        guard !added.isEmpty else {
            return "Account \(accountId.lowercased) was already stored: nothing added (\(plural(eventsAlreadyStored, "event")) already there).\n"
        }
        return "Imported account \(accountId.lowercased): added \(added.joined(separator: ", "))"
            + (eventsAlreadyStored > 0 ? "; \(plural(eventsAlreadyStored, "event")) were already stored.\n" : ".\n")
    }
}

public struct EraseReport: AdminReport {
    public var accountId: UUID
    public var events: Int64
    public var projectionRows: Int64
    public var devices: Int64
    public var accounts: Int64

    public var text: String {
        "Erased account \(accountId.lowercased): \(plural(Int(events), "event")), \(plural(Int(projectionRows), "projection row")), \(plural(Int(devices), "device")) (with their tokens) and the account.\n"
    }
}

/// "1 event", "2 events".
func plural(_ count: Int, _ word: String) -> String {
    "\(count) \(word)\(count == 1 ? "" : "s")"
}

extension UUID {
    var lowercased: String { uuidString.lowercased() }
}

extension EventBody {
    /// One line saying what the event is about.
    public var summary: String {
        switch self {
        case .donation(let donation):
            "\(donation.bundleId)/\(donation.identifier) \"\(donation.title)\"" + (donation.groupIdentifier.map { " group \($0)" } ?? "")
        case .deletion(let deletion):
            switch deletion.selector {
            case .identifiers(let identifiers): "\(deletion.bundleId) identifiers \(identifiers.joined(separator: ", "))"
            case .groupIdentifier(let group): "\(deletion.bundleId) group \(group)"
            case .all: "\(deletion.bundleId) all"
            }
        case .voiceShortcutAdded(let added):
            "\(added.voiceShortcutId.short) \"\(added.phrase)\" → \(added.bundleId)/\(added.identifier)"
        case .voiceShortcutUpdated(let updated):
            "\(updated.voiceShortcutId.short) \"\(updated.phrase)\""
        case .voiceShortcutDeleted(let deleted):
            "\(deleted.voiceShortcutId.short)"
        case .appsReported(let report):
            "\(report.installed.count) app\(report.installed.count == 1 ? "" : "s")"
        }
    }
}

import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

public struct HistoryReport: AdminReport {
    public struct Effect: Encodable, Sendable, Hashable {
        public var kind: String
        public var description: String
    }

    public struct Entry: Encodable, Sendable, Hashable {
        /// The event's place in its account's log.
        public var version: Int64
        /// Where this PostgreSQL recorded it among all accounts' events (informative).
        public var position: Int64
        public var recordedAt: Date
        public var deviceId: UUID
        public var type: EventType
        public var effects: [Effect]
    }

    public var accountId: UUID
    public var shortcut: String
    public var entries: [Entry]
    /// A compacted account's horizon: the history shown starts after it.
    public var compacted: CompactedHistory?

    public var text: String {
        var table = TextTable([.init("VERSION", alignRight: true), .init("RECORDED"), .init("DEVICE", maxWidth: 8), .init("TYPE"),
                               .init("EFFECT", maxWidth: 120)])
        for entry in entries {
            table.append([String(entry.version), LocalTime.format(entry.recordedAt), entry.deviceId.short, entry.type.rawValue,
                          entry.effects.map(\.description).joined(separator: "; ")])
        }
        return "\(shortcut) in account \(accountId.lowercased)\n" + (compacted?.line ?? "") + "\n" + table.rendered
    }
}

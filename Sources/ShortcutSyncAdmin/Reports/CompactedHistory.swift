import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

/// Where a compacted account's history starts (`events`, `history`): its events up to `version`
/// are gone, and those kept at or below it (partial) are not shown.
public struct CompactedHistory: Encodable, Sendable, Hashable {
    /// The horizon's version: the history shown starts after it.
    public var version: Int64
    /// The horizon's time (the greatest clock among the compacted events).
    public var time: Date

    init(_ horizon: AccountHorizon) {
        version = horizon.version
        time = Date(timeIntervalSince1970: Double(horizon.key.hlc.wallMillis) / 1000)
    }

    /// The line before the table.
    var line: String {
        "Compacted through version \(version) (\(ISO8601.format(time))): the history shown starts after it.\n"
    }
}

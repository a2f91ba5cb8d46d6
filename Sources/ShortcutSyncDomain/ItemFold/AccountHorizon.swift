import Foundation

/// How far an account's history was compacted (DESIGN §3, "Across the horizon"): its events up to
/// `version` are gone from the log, and what the fold needs of them is kept in its rows. `key` is
/// the greatest key among them; every event left in the log is later.
///
/// An event folded afterwards with a key at or below `key` (a device that was offline longer than
/// the retention) cannot be placed among events that are gone. It is folded as if it had happened
/// just after the horizon, on its own device and seq (`effectiveKey`): a late deletion covers every
/// compacted donation it selects, a late donation is newer than all of them, a late forget forgets
/// them, a late pause starts at the horizon, and a late donation teaches the suggestions at the
/// horizon's time. The log records it at that clock, so every later fold of it agrees.
public struct AccountHorizon: Sendable, Hashable {
    public var version: Int64
    public var key: EventKey

    public init(version: Int64, key: EventKey) {
        self.version = version
        self.key = key
    }

    /// Whether the horizon is one a compaction can make (issue 65, item 6): a version of the
    /// account's (1 or more, within `Limits.storedCountRange`) and a key with a clock and seq an
    /// event can have, so that the clock just after it (`nextHLC`) exists.
    public var isWithinLimits: Bool {
        version >= 1 && Limits.storedCountRange.contains(version) && key.isWithinLimits
    }

    /// The clock just after the horizon's: every key with it is greater than `key`.
    public var nextHLC: HLCTimestamp {
        HLCTimestamp(wallMillis: key.hlc.wallMillis, counter: key.hlc.counter + 1)
    }

    /// The key at which an event with `key` is folded: its own when it is later than the horizon,
    /// else the clock just after the horizon's, keeping its device and seq (so keys stay unique).
    public func effectiveKey(_ key: EventKey) -> EventKey {
        key > self.key ? key : EventKey(hlc: nextHLC, deviceId: key.deviceId, seq: key.seq)
    }

    /// The event as it is folded (`effectiveKey`, and its habit at that time).
    public func effective(_ event: FoldEvent) -> FoldEvent {
        guard event.key <= key else { return event }
        var event = event
        event.key = effectiveKey(event.key)
        event.habit?.wallMillis = event.key.hlc.wallMillis
        return event
    }
}

extension Optional where Wrapped == AccountHorizon {
    /// `effective(_:)` of a horizon, or the event itself when the account has none.
    public func effective(_ event: FoldEvent) -> FoldEvent {
        self?.effective(event) ?? event
    }
}

import Foundation
import PropertyBased
import Testing
@testable import ShortcutSyncDomain
import ShortcutSyncTestSupport

/// Compaction and the merge rule across the horizon (DESIGN §3, `AccountHorizon`): for any
/// history, any horizon at a clean cut and any arrival order, the rows of a compacted account
/// — its snapshot and the events after it, including events older than the horizon that arrive
/// afterwards — equal the rows of the same events folded uncompacted, with each late event at the
/// horizon's clock; the views are the whole-set fold's of that set; compacting changes no view;
/// and a rebuild from the snapshot gives the same rows.
@Suite struct CompactionPropertyTests {
    /// One history delivered around a compaction: the events up to a key `K` arrive first, but for
    /// a few held back (`late`); then some events later than `K`; then the account is compacted
    /// through the first part (a clean cut: every event after it is later than `K`); then the rest,
    /// with the late ones among them.
    struct Delivery {
        var arrivals: [AcceptedEvent]
        var horizonVersion: Int64
        var compactedAt: Int
        var late: Set<EventKey>
        var horizonKey: EventKey

        init(_ events: [AcceptedEvent], seed: Int) {
            var rng = SeededGenerator(seed: UInt64(seed))
            var seen: Set<EventKey> = []
            let events = events.filter { seen.insert($0.key).inserted }
            let key = events.randomElement(using: &rng)!.key
            let before = events.filter { $0.key <= key }, after = events.filter { $0.key > key }
            // The event at K stays in the compacted part, so K is its greatest key.
            let late = before.filter { $0.key != key && Int.random(in: 0..<4, using: &rng) == 0 }
            let lateKeys = Set(late.map(\.key))
            self.late = lateKeys
            let compacted = before.filter { !lateKeys.contains($0.key) }
            let split = Int.random(in: 0...after.count, using: &rng)
            var rest = Array(after[split...])
            for event in late { rest.insert(event, at: Int.random(in: 0...rest.count, using: &rng)) }
            arrivals = compacted + after[..<split] + rest
            horizonVersion = Int64(compacted.count)
            compactedAt = compacted.count + split
            horizonKey = key
        }

        /// The events as the rule folds them: each late one at the clock just after the horizon's.
        var asTheRuleFoldsThem: [AcceptedEvent] {
            let next = AccountHorizon(version: horizonVersion, key: horizonKey).nextHLC
            return arrivals.map { event in
                guard late.contains(event.key) else { return event }
                return AcceptedEvent(deviceId: event.deviceId, event: Event(id: event.event.id, seq: event.event.seq, hlc: next, body: event.event.body))
            }
        }
    }

    /// Folds `events` (version = place) in batches of random sizes, compacting through
    /// `compact.through` once the first `compact.at` are folded; returns the store and the rows
    /// just before and just after the compaction.
    static func fold(_ events: [AcceptedEvent], seed: Int, compact: (through: Int64, at: Int)? = nil) throws
        -> (store: FoldRowStore, aroundCompaction: (before: AccountFoldRows, after: AccountFoldRows)?) {
        var rng = SeededGenerator(seed: UInt64(seed))
        var store = FoldRowStore()
        var around: (AccountFoldRows, AccountFoldRows)?
        var done = 0
        while done < events.count || (compact != nil && around == nil) {
            if let compact, around == nil, done == compact.at {
                let before = store.rows
                let horizon = try store.compact(through: compact.through)
                #expect(horizon != nil, "a clean cut compacts")
                around = (before, store.rows)
                continue
            }
            let limit = compact.map { done < $0.at ? $0.at : events.count } ?? events.count
            let size = Int.random(in: 1...8, using: &rng)
            let batch = events[done..<min(limit, done + size)].enumerated().map { FoldEvent($1, version: Int64(done + $0 + 1)) }
            try store.fold(batch)
            done += batch.count
        }
        return (store, around)
    }

    /// Rows without what only a compaction writes: the compacted parts of the groups, the horizon.
    static func uncompacted(_ rows: AccountFoldRows) -> AccountFoldRows {
        var rows = rows
        rows.horizon = nil
        rows.groups = rows.groups.mapValues(\.uncompacted)
        return rows
    }

    static func check(_ events: [AcceptedEvent], seed: Int) throws {
        guard !events.isEmpty else { return }
        let delivery = Delivery(events, seed: seed)
        let (compacted, around) = try fold(delivery.arrivals, seed: seed &+ 1,
                                           compact: (delivery.horizonVersion, delivery.compactedAt))
        let rule = delivery.asTheRuleFoldsThem
        let plain = try fold(rule, seed: seed &+ 2).store

        // The same rows as the rule's events folded uncompacted, and the same view and sums.
        #expect(uncompacted(compacted.rows) == plain.rows)
        let state = AccountState(folding: rule)
        #expect(compacted.shortcuts.mapValues(\.donationCount) == state.accountView.shortcuts.mapValues(\.donationCount))
        #expect(compacted.voiceShortcuts == state.accountView.voiceShortcuts)
        #expect(compacted.rows.devices.mapValues(\.value) == state.reportedApps)
        #expect(SuggestionPropertyTests.candidates(compacted.rows) == state.allHabits)
        // Compacting changed no view: only the compacted parts.
        if let around { #expect(uncompacted(around.after) == uncompacted(around.before)) }

        // A rebuild: the snapshot, then every event after the horizon in other batches.
        let snapshot = try #require(compacted.snapshot)
        #expect(snapshot.horizon?.version == delivery.horizonVersion)
        var rng = SeededGenerator(seed: UInt64(seed &+ 3))
        var rebuild = FoldRowStore(snapshot: snapshot)
        let after = delivery.arrivals.enumerated().dropFirst(Int(delivery.horizonVersion))
        var pending = Array(after)
        while !pending.isEmpty {
            let size = Int.random(in: 1...8, using: &rng)
            try rebuild.fold(pending.prefix(size).map { FoldEvent($1, version: Int64($0 + 1)) })
            pending.removeFirst(min(size, pending.count))
        }
        #expect(rebuild.rows == compacted.rows)
    }

    @Test func aCompactedAccountFoldsLateEventsAtTheHorizonAndEqualsARebuild() async {
        await propertyCheck(count: 300, input: FoldPropertyTests.choices, FoldPropertyTests.seeds) { choices, seed in
            #expect(throws: Never.self) { try Self.check(FoldPropertyTests.history(from: choices), seed: seed) }
        }
    }

    @Test func learningAndSignOutsAcrossTheHorizonGiveTheRulesSums() async {
        await propertyCheck(count: 300, input: SuggestionPropertyTests.choices, SuggestionPropertyTests.seeds) { choices, seed in
            let (events, _) = SuggestionPropertyTests.signingOut(LearningPropertyTests.history(from: choices), choice: seed)
            #expect(throws: Never.self) { try Self.check(events, seed: seed) }
        }
    }

    /// The rule's worked examples: a deletion older than the horizon that arrives after it covers
    /// every compacted donation it selects, and the donations after the horizon older than its
    /// clock there; a donation older than the horizon is newer than all of them.
    @Test func aLateDeletionCoversEverythingCompactedAndALateDonationIsNewest() throws {
        let phone = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!, watch = UUID(uuidString: "00000000-0000-0000-0000-000000000002")!
        func donation(_ device: UUID, _ seq: Int64, at wall: Int64, title: String) -> AcceptedEvent {
            AcceptedEvent(deviceId: device, event: Event(seq: seq, hlc: HLCTimestamp(wallMillis: wall), body: .donation(Donation(
                bundleId: "com.example.soup", identifier: "tomato", kind: .intent, intentType: "OrderSoupIntent", title: title))))
        }
        let deletion = AcceptedEvent(deviceId: watch, event: Event(seq: 1, hlc: HLCTimestamp(wallMillis: 150),
                                                                     body: .deletion(Deletion(bundleId: "com.example.soup", selector: .all))))
        let lateDonation = donation(watch, 2, at: 160, title: "late")
        var store = FoldRowStore()
        try store.fold([donation(phone, 1, at: 100, title: "a"), donation(phone, 2, at: 200, title: "b")].enumerated()
            .map { FoldEvent($1, version: Int64($0 + 1)) })
        let horizon = try #require(try store.compact(through: 2))
        #expect(horizon.key.hlc.wallMillis == 200)
        let group = DonationGroupID(shortcut: ShortcutID(bundleId: "com.example.soup", identifier: "tomato"), group: "")
        #expect(store.rows.groups[group]?.compactedCount == 2)

        // Offline since before the horizon, the watch deletes (clock 150) and donates (160).
        try store.fold([FoldEvent(deletion, version: 3)])
        #expect(store.rows.groups[group] == nil, "the late deletion covers both compacted donations")
        try store.fold([FoldEvent(lateDonation, version: 4)])
        let row = try #require(store.rows.groups[group])
        #expect(row.count == 1 && row.latestVersion == 4 && row.compactedCount == 0)
        #expect(row.latest.hlc == horizon.nextHLC, "folded just after the horizon")
    }
}

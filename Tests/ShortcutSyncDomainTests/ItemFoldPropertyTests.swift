import Foundation
import PropertyBased
import Testing
@testable import ShortcutSyncDomain
import ShortcutSyncTestSupport

/// The per-item fold, batch by batch over stored rows, against the whole-set fold.
@Suite struct ItemFoldPropertyTests {
    /// Folds `events` in batches of random sizes through a row store, checking after every
    /// batch that the stored rows, and the projected items kept from the reported changes,
    /// give exactly the whole-set fold's view of the events so far.
    static func foldInBatches(_ events: [AcceptedEvent], seed: Int) throws -> FoldRowStore {
        var rng = SeededGenerator(seed: UInt64(seed))
        var store = FoldRowStore()
        var donations: [Int64: Donation] = [:]
        var done = 0
        while done < events.count {
            let size = Int.random(in: 1...10, using: &rng)
            let batch = events[done..<min(events.count, done + size)].enumerated().map { offset, event in
                FoldEvent(event, version: Int64(done + offset + 1))
            }
            for (offset, event) in events[done..<min(events.count, done + size)].enumerated() {
                if case .donation(let donation) = event.event.body { donations[Int64(done + offset + 1)] = donation }
            }
            try store.fold(batch)
            done += batch.count

            let expected = AccountState(folding: events.prefix(done))
            let view = expected.accountView
            let projected = store.shortcuts.mapValues { projection in
                ShortcutView(latest: donations[projection.latestVersion]!, donationCount: projection.donationCount,
                             lastDonatedAt: projection.lastDonatedAt)
            }
            #expect(projected == view.shortcuts, "shortcuts after \(done) events")
            #expect(store.voiceShortcuts == view.voiceShortcuts, "voice shortcuts after \(done) events")
            // The stored rows alone give the same view as the changes reported batch by batch.
            let stored = Dictionary(grouping: store.rows.groups.values, by: \.id.shortcut).compactMapValues { ShortcutProjection(groups: $0) }
            #expect(stored == store.shortcuts)
            #expect(store.rows.voiceShortcuts.values.compactMap(\.view).count == view.voiceShortcuts.count)
            #expect(store.rows.devices.mapValues(\.value) == expected.reportedApps)
            #expect(store.rows.maxHLC == expected.maxHLC)
        }
        return store
    }

    @Test func foldingBatchByBatchOverStoredRowsEqualsTheWholeSetFold() async throws {
        await propertyCheck(count: 300, input: FoldPropertyTests.choices, FoldPropertyTests.seeds) { choices, seed in
            #expect(throws: Never.self) { try Self.foldInBatches(FoldPropertyTests.history(from: choices), seed: seed) }
        }
    }

    /// Histories with many late, older deletions, so that batches land deletions among an
    /// earlier batch's donations and the log is asked to count what they cover.
    @Test func deletionsLandingAmongEarlierDonationsAreRecountedFromTheLog() throws {
        var recounts = 0
        for seed in 0..<50 {
            var rng = SeededGenerator(seed: UInt64(seed))
            let choices = (0..<60).map { _ in Int.random(in: 0...Int(Int32.max), using: &rng) }
            recounts += try Self.foldInBatches(FoldPropertyTests.history(from: choices), seed: seed).recounts
        }
        #expect(recounts > 0)
    }

    /// A batch says its view changed exactly when it did, which shortcuts it added, how many the
    /// view holds after it, and leaves the account at its last event's version.
    @Test func aBatchSaysWhenTheViewChangedWhatItAddedAndEndsAtItsLastVersion() throws {
        var rng = SeededGenerator(seed: 7)
        let choices = (0..<200).map { _ in Int.random(in: 0...Int(Int32.max), using: &rng) }
        let events = FoldPropertyTests.history(from: choices)
        var store = FoldRowStore()
        var before = AccountState().accountView
        for (index, chunk) in stride(from: 0, to: events.count, by: 5).enumerated() {
            let slice = events[chunk..<min(events.count, chunk + 5)]
            let result = try store.fold(slice.enumerated().map { FoldEvent($1, version: Int64(chunk + $0 + 1)) })
            let after = AccountState(folding: events.prefix(chunk + slice.count)).accountView
            #expect(result.viewChanged == (after != before), "batch \(index)")
            #expect(result.version == Int64(chunk + slice.count))
            // The shortcuts it added are those of the view after it and not before (the bound's count).
            #expect(result.addedShortcuts == Set(after.shortcuts.keys).subtracting(before.shortcuts.keys), "batch \(index)")
            // And how many the view holds after it, kept on the account's row instead of counted.
            #expect(result.shortcutCount == after.shortcuts.count, "batch \(index)")
            before = after
        }
    }

    @Test func anOlderDeletionArrivingLaterCoversOnlyTheDonationsBeforeIt() throws {
        var phone = DeviceScript()
        var mac = DeviceScript(account: phone.account)
        let first = phone.donate("tomato", at: 1_000)
        let second = phone.donate("tomato", at: 3_000)
        let deletion = mac.delete(.identifiers(["tomato"]), at: 2_000)
        var store = FoldRowStore()
        try store.fold([FoldEvent(first, version: 1), FoldEvent(second, version: 2)])
        let result = try store.fold([FoldEvent(deletion, version: 3)])
        let tomato = ShortcutID(bundleId: "com.example.soup", identifier: "tomato")
        #expect(store.recounts == 1)
        #expect(result.shortcuts[tomato] == .some(ShortcutProjection(donationCount: 1, latest: second.key, latestVersion: 2)))
    }

    @Test func sortableBytesOrderKeysAsKeysOrder() async {
        let keys = Gen.int(in: -3...3).array(of: 4)
        await propertyCheck(count: 300, input: keys, keys) { a, b in
            func key(_ v: [Int]) -> EventKey {
                EventKey(hlc: HLCTimestamp(wallMillis: Int64(v[0]) * Int64(Int32.max), counter: v[1]),
                         deviceId: UUID(uuidString: "0000000\(v[2] + 3)-0000-0000-0000-000000000000")!, seq: Int64(v[3]))
            }
            let (x, y) = (key(a), key(b))
            #expect(EventKey(sortableBytes: x.sortableBytes) == x)
            #expect((x < y) == x.sortableBytes.lexicographicallyPrecedes(y.sortableBytes))
        }
    }
}

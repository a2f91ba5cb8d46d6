import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
@testable import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

private let logger = TestDatabase.shared.logger

/// Pushes fold their own events (DESIGN §4, §6): an acknowledged push is in every device's next
/// pull, whatever the split of the events into pushes, their order across devices and the retries.
@Suite struct PushFoldTests {
    /// A random history of one account's three devices, cut into pushes at random points, sent in
    /// a random interleaving of the devices, some pushes twice (a lost answer) and some starting
    /// with events accepted before (an overlapping retry). After every push the pushing device's
    /// view is the whole-set fold of what was acknowledged so far; at the end every device's view,
    /// fresh or brought up to date from a cursor taken halfway, is the whole set's.
    /// The optimistic push's one statement writes only when the head is where its fold was read:
    /// a fold of a stale head stores nothing at all (no event, no row); the same batch folded
    /// over the current head is stored whole. (That the batch continues the device's seqs is
    /// checked on the rows read with the head, before the statement: `EventStoreTests`.)
    /// Both of its forms: with every arm, and with the arms of a push of donations alone.
    @Test(arguments: [false, true])
    func theOptimisticStatementWritesNothingUnlessItsFoldIsOfTheCurrentHead(donationArmsOnly: Bool) async throws {
        try await TestDatabase.withClient { client, _ in
            var phone = DeviceScript(account: UUID(), detail: .full)
            try await openAccount(phone.account, client: client)
            let store = PostgresEventStore(client: client, logger: logger)
            let first = phone.donate("soup-1", at: 10)
            #expect(try await store.append([first.event], account: phone.account, device: phone.deviceId).version == 1)
            let next = phone.donate("soup-2", at: 20)
            let rows = ProjectionRowStore(tables: .live, logger: logger)
            let projections = ProjectionStore(client: client, logger: logger)
            let before = try await projections.fullView(account: phone.account, device: phone.deviceId)

            func attempt(_ batch: [Event], foldedOver version: Int64) async throws -> Int {
                try await client.withConnection { connection in
                    let events = batch.enumerated().map { offset, event in
                        FoldEvent(AcceptedEvent(deviceId: phone.deviceId, event: event), version: version + Int64(offset) + 1)
                    }
                    let needs = FoldNeeds(events: events)
                    // The rows as they were at `version`: none at 0, the stored ones at 1; the head's mark as it is.
                    let (read, head) = try await rows.readWithHead(account: phone.account, needs: needs, device: phone.deviceId, on: connection)
                    let stored = version == 0 ? AccountFoldRows() : read
                    let mark = try #require(head).mark
                    let result = try await rows.fold(account: phone.account, batch: AccountBatch(events: events, foldedVersion: version),
                                                     needs: needs, stored: stored, on: connection)
                    if donationArmsOnly {
                        #expect(DonationFoldArms.holds(result))
                        let statement = AppendFoldedStatement<DonationFoldArms>(account: phone.account, device: phone.deviceId, batch: batch[...],
                                                                                expectedVersion: version, expectedMark: mark, result: result,
                                                                                history: PostgresEventStore.newHistory())
                        return try await connection.guardedExecute(statement, logger: logger).first.map { $0?.appended ?? 0 } ?? -1
                    }
                    let statement = AppendFoldedStatement<EveryFoldArm>(account: phone.account, device: phone.deviceId, batch: batch[...],
                                                                        expectedVersion: version, expectedMark: mark, result: result,
                                                                        history: PostgresEventStore.newHistory())
                    return try await connection.guardedExecute(statement, logger: logger).first.map { $0?.appended ?? 0 } ?? -1
                }
            }
            #expect(try await attempt([next.event], foldedOver: 0) == 0, "a fold of a stale head")
            #expect(try await eventCount(client) == 1)
            #expect(try await projections.head(account: phone.account) == (1, 1))
            #expect(try await projections.fullView(account: phone.account, device: phone.deviceId) == before)

            #expect(try await attempt([next.event], foldedOver: 1) == 1, "the current head")
            #expect(try await projections.head(account: phone.account) == (2, 2))
            let view = try await projections.fullView(account: phone.account, device: phone.deviceId)
            #expect(view.shortcuts.keys.map(\.identifier).sorted() == ["soup-1", "soup-2"])
        }
    }

    @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6])
    func anySplitOfAnEventSetIntoPushesFoldsToTheWholeSetsViews(seed: UInt64) async throws {
        try await TestDatabase.withClient { client, _ in
            var scenario = Scenario(seed: seed, accounts: 1, devicesPerAccount: 3)
            var histories: [UUID: [AcceptedEvent]] = [:]
            for _ in 0..<40 {
                let (device, events) = scenario.push()
                histories[device.deviceId, default: []] += events
            }
            let account = scenario.devices[0].account
            var random = SeededGenerator(seed: seed &+ 1_000)
            // Each device's events, cut into pushes of 1 to 12 events.
            var pushes: [UUID: [[AcceptedEvent]]] = [:]
            for (device, events) in histories {
                var rest = events[...]
                while !rest.isEmpty {
                    let size = Int.random(in: 1...12, using: &random)
                    pushes[device, default: []].append(Array(rest.prefix(size)))
                    rest = rest.dropFirst(size)
                }
            }

            try await openAccount(account, client: client)
            try await openDevices(scenario.devices.map(\.deviceId), of: account, client: client)
            let store = PostgresEventStore(client: client, logger: logger)
            let projections = ProjectionStore(client: client, logger: logger)
            var acknowledged: [AcceptedEvent] = []
            var previous: [UUID: [AcceptedEvent]] = [:]
            var halfway: [UUID: (view: DeviceView, cursor: PullCursor)] = [:]
            let total = pushes.values.map(\.count).reduce(0, +)
            var sent = 0
            while let device = pushes.filter({ !$0.value.isEmpty }).keys.sorted(by: { $0.uuidString < $1.uuidString }).randomElement(using: &random) {
                let batch = pushes[device]!.removeFirst()
                let overlap = Bool.random(using: &random) ? Array((previous[device] ?? []).suffix(Int.random(in: 1...3, using: &random))) : []
                let result = try await store.append((overlap + batch).map(\.event), account: account, device: device)
                #expect(result.appended == batch.count)
                #expect(result.folded)
                acknowledged += batch
                #expect(result.version == Int64(acknowledged.count))
                if Int.random(in: 0..<4, using: &random) == 0 {
                    let retry = try await store.append(batch.map(\.event), account: account, device: device)
                    #expect(retry.appended == 0)
                    #expect(retry.version == result.version)
                }
                previous[device] = batch
                // Acknowledged means folded: the next pull shows it, with no worker running.
                let view = try await projections.fullView(account: account, device: device)
                #expect(view == AccountState(folding: acknowledged).view(forDevice: device), "seed \(seed), push \(sent)")
                // The account's row keeps how many shortcuts its view holds (DESIGN §5's bound reads it).
                let held = try await shortcutCounts(account, client: client)
                #expect(held.kept == AccountState(folding: acknowledged).accountView.shortcuts.count, "seed \(seed), push \(sent)")
                #expect(held.kept == held.counted, "seed \(seed), push \(sent)")
                sent += 1
                if sent == total / 2 {
                    for other in histories.keys {
                        let pull = try await projections.pull(account: account, device: other, cursor: nil)
                        var view = DeviceView.empty.applying(pull.changes)
                        var cursor = pull.cursor
                        var more = pull.more
                        while more {
                            let page = try await projections.pull(account: account, device: other, cursor: cursor)
                            view = view.applying(page.changes)
                            (cursor, more) = (page.cursor, page.more)
                        }
                        halfway[other] = (view, cursor)
                    }
                }
            }

            for device in histories.keys {
                let expected = AccountState(folding: acknowledged).view(forDevice: device)
                #expect(try await projections.fullView(account: account, device: device) == expected)
                guard let (view, cursor) = halfway[device] else { continue }
                var pull = try await projections.pull(account: account, device: device, cursor: cursor)
                // A device whose apps changed since (it reported others) gets its whole view again.
                var caughtUp = pull.reset ? DeviceView.empty.applying(pull.changes) : view.applying(pull.changes)
                while pull.more {
                    pull = try await projections.pull(account: account, device: device, cursor: pull.cursor)
                    caughtUp = caughtUp.applying(pull.changes)
                }
                #expect(caughtUp == expected, "seed \(seed): the diff from halfway, applied, is the whole view")
            }
            let head = try await projections.head(account: account)
            #expect(head.version == Int64(acknowledged.count))
            #expect(head.folded == head.version)
        }
    }

    /// The shortcut count on the account's row, and the shortcuts its view holds, counted.
    private func shortcutCounts(_ account: UUID, client: PostgresClient) async throws -> (kept: Int, counted: Int) {
        let rows = try await client.query("""
            SELECT (SELECT shortcut_count FROM projection_accounts WHERE account_id = \(account)),
                   (SELECT count(*) FROM projection_shortcuts WHERE account_id = \(account) AND view IS NOT NULL)
            """, logger: logger)
        for try await (kept, counted) in rows.decode((Int32?, Int64).self) { return (Int(kept ?? 0), Int(counted)) }
        return (0, 0)
    }

    /// Pushes of two devices of one account at once take contiguous versions; nothing is lost or
    /// doubled, and the views are the whole set's.
    @Test func twoDevicesPushingAtOnceTakeContiguousVersions() async throws {
        try await TestDatabase.withClient { client, _ in
            let account = UUID()
            var phone = DeviceScript(account: account, detail: .full)
            var mac = DeviceScript(account: account, detail: .full)
            var wall: Int64 = 1_763_712_000_000
            let phoneBatches = (0..<30).map { round in (0..<5).map { _ in phone.donate("p\(round % 7)", at: { wall += 1; return wall }()) } }
            let macBatches = (0..<30).map { round in (0..<5).map { _ in mac.donate("m\(round % 5)", bundle: "com.example.tea", at: { wall += 1; return wall }()) } }
            try await openAccount(account, client: client)
            let store = PostgresEventStore(client: client, logger: logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (device, batches) in [(phone.deviceId, phoneBatches), (mac.deviceId, macBatches)] {
                    group.addTask {
                        for batch in batches {
                            let result = try await store.append(batch.map(\.event), account: account, device: device)
                            #expect(result.appended == batch.count && result.folded)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let stored = try await store.readStream(account: account, after: 0, limit: 1_000)
            #expect(stored.map(\.version) == Array(1...300))
            let all = (phoneBatches + macBatches).flatMap { $0 }
            let projections = ProjectionStore(client: client, logger: logger)
            for device in [phone.deviceId, mac.deviceId] {
                #expect(try await projections.fullView(account: account, device: device) == AccountState(folding: all).view(forDevice: device))
            }
        }
    }
}

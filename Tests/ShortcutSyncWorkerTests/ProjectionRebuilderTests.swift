import Foundation
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import ShortcutSyncWorker
import Testing

private let logger = TestDatabase.shared.logger

/// The rebuild of DESIGN §6: account by account in parallel ranges, bulk-written, then caught up
/// with the pushes that came meanwhile, and swapped in.
@Suite struct ProjectionRebuilderTests {
    /// Thousands of events per account stream in while rows are written after every account: a
    /// stream and writes on one connection would wait for each other forever.
    @Test func aRebuildWritingWhileItStreamsALargeLogFinishesAndEqualsTheLiveFold() async throws {
        try await TestDatabase.withClient { client, _ in
            var scenario = Scenario(seed: 3, accounts: 3, devicesPerAccount: 4)
            var log = PushLog(client: client)
            var total = 0
            while total < 9000 {
                let (device, events) = scenario.push(maxEvents: 200)
                try await log.push(device, events)
                total += events.count
            }
            let store = ProjectionStore(client: client, logger: logger)

            var rebuilder = store.rebuilder
            rebuilder.accountsPerWrite = 1
            let seen = ProgressLog()
            let verification = try await rebuilder.verify { await seen.record($0) }
            #expect(verification.differences == [])
            #expect(await seen.last?.processed == total)
            #expect(await seen.last?.accounts == 3)
            // And both are the domain's fold of each account's events.
            for device in scenario.devices {
                #expect(try await store.fullView(account: device.account, device: device.deviceId)
                    == log.expectedView(account: device.account, device: device.deviceId))
            }
        }
    }

    /// Devices of several accounts keep pushing while the projections are rebuilt and promoted,
    /// again and again: every rebuilt account is caught up with the pushes that came after it was
    /// read, the promotion loses none, and `verify` afterwards finds no difference.
    @Test func aRebuildAndPromotionWhilePushesGoOnLoseNothing() async throws {
        try await TestDatabase.withClient { client, _ in
            var scenario = Scenario(seed: 17, accounts: 6, devicesPerAccount: 2)
            var log = try await PushLog.registering(&scenario, pushes: 150, client: client)
            // The pushes to come, decided beforehand: two of the accounts get none.
            let busy = Set(scenario.devices.map(\.account).prefix(8))
            var later: [(DeviceScript, [AcceptedEvent])] = []
            while later.count < 250 {
                let push = scenario.push()
                if busy.contains(push.device.account) { later.append(push) }
            }
            let store = ProjectionStore(client: client, logger: logger)
            var rebuilder = store.rebuilder
            rebuilder.partitions = 3
            rebuilder.accountsPerWrite = 1
            let pushed = PushCount()
            let rounds = try await withThrowingTaskGroup(of: Int.self) { group in
                let events = PostgresEventStore(client: client, logger: logger)
                let pushes = later, rebuilder = rebuilder
                group.addTask {
                    for (device, batch) in pushes {
                        let result = try await events.append(batch.map(\.event), account: device.account, device: device.deviceId)
                        #expect(result.folded)
                        await pushed.add()
                    }
                    await pushed.finish()
                    return 0
                }
                group.addTask {
                    // Some pushes first, so that the first rebuild already reads a moving log.
                    while await pushed.count < 20 { try await Task.sleep(for: .milliseconds(2)) }
                    var rounds = 0
                    repeat {
                        try await rebuilder.rebuild()
                        try await rebuilder.promote()
                        rounds += 1
                    } while await !pushed.done
                    return rounds
                }
                return try await group.reduce(0, +)
            }
            #expect(rounds >= 1)
            for (device, batch) in later { log.record(device, batch) }

            let verification = try await rebuilder.verify()
            #expect(verification.differences == [])
            #expect(verification.accountsCompared == 6 && verification.accountsBehind == 0)
            for device in scenario.devices {
                #expect(try await store.fullView(account: device.account, device: device.deviceId)
                    == log.expectedView(account: device.account, device: device.deviceId))
            }
            // Every account is current at its head: nothing is left for the maintenance tasks.
            let status = try await store.status()
            #expect(status.accountsBehind == 0 && status.parkedAccounts == 0)
        }
    }

    /// A promotion makes accounts that were behind (an import not folded yet) current: their
    /// rebuilt rows include their head, and no maintenance fold adds their events a second time.
    @Test func aPromotionMakesTheAccountsBehindCurrent() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = ProjectionStore(client: client, logger: logger)
            var phone = DeviceScript(account: UUID(), detail: .full)
            let backlog = [phone.donate("soup", at: 100), phone.donate("soup", at: 110), phone.donate("tea", at: 120)]
            try await writeBacklog(backlog, account: phone.account, client: client)
            let before = try await store.rebuilder.verify()
            #expect(before.accountsBehind == 1 && before.differences == [])

            try await store.rebuilder.promote()
            #expect(try await store.head(account: phone.account) == (3, 3))
            #expect(try await store.foldAll() == 0)
            let view = try await store.fullView(account: phone.account, device: phone.deviceId)
            #expect(view.shortcuts[ShortcutID(bundleId: "com.example.soup", identifier: "soup")]?.donationCount == 2)
            #expect(view == AccountState(folding: backlog).view(forDevice: phone.deviceId))
        }
    }
}

/// How many of a test's pushes went through, and whether all did.
actor PushCount {
    private(set) var count = 0
    private(set) var done = false
    func add() { count += 1 }
    func finish() { done = true }
}

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

    /// A promotion holds one account at a time: while another session holds one account's head
    /// (as a push of it in flight would), the promotion swaps every other account, their pushes
    /// go through, and their cursors from before are answered with the whole view; the held
    /// account is swapped once it is let go, and every view is the fold's. (With the promotion's
    /// old `LOCK TABLE account_heads`, nothing was swapped and no push went through meanwhile.)
    @Test func aPromotionHoldsOnlyTheAccountItSwapsWhileTheOthersPush() async throws {
        try await TestDatabase.withClient { client, _ in
            var scenario = Scenario(seed: 29, accounts: 4, devicesPerAccount: 1)
            var log = try await PushLog.registering(&scenario, pushes: 60, client: client)
            let devices = scenario.devices
            let held = devices[0], others = Array(devices.dropFirst())
            var later: [(DeviceScript, [AcceptedEvent])] = []
            while later.count < 12 {
                let push = scenario.push()
                if push.device.account != held.account { later.append(push) }
            }
            let store = ProjectionStore(client: client, logger: logger)
            var rebuilder = store.rebuilder
            rebuilder.partitions = devices.count
            try await rebuilder.rebuild()
            var cursors: [UUID: PullCursor] = [:]
            for device in devices {
                cursors[device.account] = try await store.pull(account: device.account, device: device.deviceId, cursor: nil).cursor
            }
            let epoch = try await store.status().epoch

            let locked = Flag(), release = Flag(), promoted = PushCount(), finished = Flag()
            try await withThrowingTaskGroup(of: Void.self) { group in
                let rebuilder = rebuilder
                group.addTask {
                    try await client.withConnection { connection in
                        try await connection.inTransaction(logger: logger) { connection in
                            _ = try await connection.query("SELECT 1 FROM account_heads WHERE account_id = \(held.account) FOR UPDATE",
                                                       logger: logger).collectAll()
                            await locked.set()
                            try await eventually("the test lets the head go", timeout: .seconds(120)) { await release.isSet }
                        }
                    }
                }
                group.addTask {
                    try await eventually("the head is held") { await locked.isSet }
                    try await rebuilder.promote { _ in await promoted.add() }
                    await finished.set()
                }
                // Let go whatever happens, so that the promotion ends.
                defer { Task { await release.set() } }
                try await eventually("the promotion swaps every account but the held one") { await promoted.count == others.count }
                let events = PostgresEventStore(client: client, logger: logger)
                for (device, batch) in later {
                    let result = try await within(.seconds(20), "a push of another account during the promotion") {
                        try await events.append(batch.map(\.event), account: device.account, device: device.deviceId)
                    }
                    #expect(result.folded)
                }
                for device in others {
                    let pulled = try await store.pull(account: device.account, device: device.deviceId, cursor: cursors[device.account])
                    #expect(pulled.reset, "a cursor of the rows from before the account's swap gets the whole view")
                }
                let heldPull = try await store.pull(account: held.account, device: held.deviceId, cursor: cursors[held.account])
                #expect(!heldPull.reset, "the held account is not swapped yet")
                let swapped = await promoted.count, ended = await finished.isSet
                #expect(!ended && swapped == others.count, "the promotion waits for the held account alone")
                await release.set()
                try await group.waitForAll()
            }
            for (device, batch) in later { log.record(device, batch) }

            #expect(await promoted.count == devices.count)
            let heldPull = try await store.pull(account: held.account, device: held.deviceId, cursor: cursors[held.account])
            #expect(heldPull.reset)
            #expect(try await store.status().epoch == epoch + 1)
            let promotions = try await client.query("SELECT promotions FROM account_heads ORDER BY account_id", logger: logger)
                .decode(Int64.self).collectAll()
            #expect(promotions == Array(repeating: 1, count: devices.count), "each account swapped once")
            for device in devices {
                #expect(try await store.fullView(account: device.account, device: device.deviceId)
                    == log.expectedView(account: device.account, device: device.deviceId))
            }
            let verification = try await rebuilder.verify()
            #expect(verification.differences == [] && verification.accountsCompared == devices.count)
        }
    }

    /// A push that read its account's rows before the account's swap writes while the swap holds
    /// the head: on one PostgreSQL its one statement takes its snapshot before it waits for the
    /// head, so its `DELETE`s would miss the rows the swap inserted (a deleted shortcut's donation
    /// group came back). The swap changed the head's mark: the write finds another, writes
    /// nothing, and the push reads the swapped rows and writes again; the deletion holds.
    @Test func aPushThatWaitedForItsAccountsSwapWritesOverTheSwappedRows() async throws {
        try await TestDatabase.withClient { client, _ in
            var phone = DeviceScript(account: UUID(), detail: .full)
            var log = PushLog(client: client)
            try await log.push(phone, [phone.donate("soup-1", at: 10), phone.donate("soup-2", at: 11)])
            let store = ProjectionStore(client: client, logger: logger)
            try await store.rebuilder.rebuild()
            let deletion = [phone.delete(.identifiers(["soup-1"]), at: 20)]
            let account = phone.account, device = phone.deviceId
            let swapped = Flag(), release = Flag()
            let events = PostgresEventStore(client: client, logger: logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await client.withConnection { connection in
                        try await connection.inTransaction(logger: logger) { connection in
                            let (lag, _, _) = try #require(try await store.lockHeadForRebuild(account, on: connection))
                            try await store.swapRebuiltRows(of: account, rebuiltVersion: lag.version, on: connection)
                            await swapped.set()
                            try await eventually("the test lets the swap commit", timeout: .seconds(60)) { await release.isSet }
                        }
                    }
                }
                // Let go whatever happens, so that the swap ends.
                defer { Task { await release.set() } }
                try await eventually("the swap holds the head") { await swapped.isSet }
                let push = Task { try await events.append(deletion.map(\.event), account: account, device: device) }
                try await eventually("the push's write waits for the head") { try await sessionsWaitingForALock(client) > 0 }
                await release.set()
                try await group.waitForAll()
                #expect(try await push.value.folded)
            }
            log.record(phone, deletion)
            #expect(try await store.fullView(account: account, device: device) == log.expectedView(account: account, device: device))
            let groups = try await client.query("""
                SELECT count(*) FROM projection_donation_groups WHERE account_id = \(account) AND identifier = 'soup-1'
                """, logger: logger).decode(Int64.self).collectAll()
            #expect(groups == [0], "the deleted shortcut's group stays deleted")
            #expect(try await store.rebuilder.verify().differences == [])
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

/// Something that happened, once, seen from other tasks.
actor Flag {
    private(set) var isSet = false
    func set() { isSet = true }
}

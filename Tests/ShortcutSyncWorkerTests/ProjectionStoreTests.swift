import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import ShortcutSyncWorker
import Testing

private let logger = TestDatabase.shared.logger

/// The projections folded by the pushes and by the maintenance tasks, and the pulls read from
/// them (DESIGN §5, §6).
@Suite struct ProjectionStoreTests {
    @Test func cursorPullsAppliedToThePreviousViewEqualAFreshPull() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = ProjectionStore(client: client, logger: logger)
            var log = PushLog(client: client)
            let account = UUID()
            var phone = DeviceScript(account: account, detail: .full)
            var watch = DeviceScript(account: account, detail: .full)
            let quiet = DeviceScript(account: account, detail: .full)  // pulls, never pushes
            let (first, second) = (UUID(), UUID())
            var wall: Int64 = 1_763_712_000_000
            func tick() -> Int64 { wall += 10; return wall }

            // Each round is pushed (each push folds its own events), then pulled by every device.
            var rounds: [[(DeviceScript, [AcceptedEvent])]] = []
            rounds.append([
                (phone, [phone.donate("soup-1", at: tick()), phone.donate("soup-2", group: "lunch", at: tick()),
                         phone.addVoice(first, phrase: "Order soup", to: "soup-1", at: tick())]),
                (watch, [watch.donate("tea-1", bundle: "com.example.tea", at: tick()),
                         watch.addVoice(second, phrase: "ORDER  soup!", to: "soup-2", at: tick())]),
            ])
            rounds.append([
                // The owner of the phrase goes: the other voice shortcut takes it. soup-1 is deleted.
                (phone, [phone.deleteVoice(first, at: tick()), phone.delete(.identifiers(["soup-1"]), at: tick()),
                         phone.donate("soup-2", group: "lunch", at: tick())]),
            ])
            rounds.append([
                // The watch reports its apps: its view is filtered by them now, and its old cursor is reset.
                (watch, [watch.report(["com.example.tea"], at: tick()), watch.updateVoice(second, phrase: "Tea time", at: tick())]),
                (phone, [phone.delete(.groupIdentifier("lunch"), at: tick()), phone.donate("soup-3", at: tick())]),
            ])
            rounds.append([
                (watch, [watch.donate("tea-2", bundle: "com.example.tea", at: tick()), watch.report(["com.example.tea", "com.example.soup"], at: tick())]),
                (phone, [phone.delete(.all, bundle: "com.example.tea", at: tick())]),
            ])
            var scenario = Scenario(seed: 7, accounts: 1, devicesPerAccount: 2)
            scenario.devices = [phone, watch]
            scenario.voiceIds[account] = [first, second, UUID()]
            for _ in 0..<6 {
                rounds.append((0..<5).map { _ in scenario.push() })
            }

            var held: [UUID: (view: DeviceView, cursor: PullCursor?, installed: Set<String>?)] = [:]
            let devices = [phone.deviceId, watch.deviceId, quiet.deviceId]
            do {
                for round in rounds {
                    for (device, events) in round {
                        let result = try await log.push(device, events)
                        #expect(result.folded)
                        #expect(try await store.includes(version: result.version, account: account))
                    }
                    // Nothing is left for the maintenance tasks.
                    #expect(try await store.foldAll() == 0)
                    let state = AccountState(folding: log.accepted[account]!)
                    for device in devices {
                        let before = held[device]
                        let pull = try await store.pull(account: account, device: device, cursor: before?.cursor)
                        // A cursor made before the device reported other apps gives the whole view.
                        let installed = state.installedApps(ofDevice: device)
                        #expect(pull.reset == (before == nil || before!.installed != installed))
                        let view = pull.reset ? DeviceView.empty.applying(pull.changes) : before!.view.applying(pull.changes)
                        #expect(view == state.view(forDevice: device))
                        #expect(view == (try await store.fullView(account: account, device: device)))
                        #expect(pull.maxHLC == state.maxHLC)
                        held[device] = (view, pull.cursor, installed)
                    }
                }
            }
            // What the fold says about the scripted rounds, seen through the projections.
            #expect(held[phone.deviceId]!.cursor != nil)
            #expect(try await store.pull(account: account, device: phone.deviceId, cursor: held[phone.deviceId]!.cursor).changes.isEmpty)
            #expect(try await store.pull(account: account, device: phone.deviceId, cursor: nil).lastAcceptedSeq == scenario.devices[0].seq)
        }
    }

    @Test func scriptedChangesReachTheRightViewers() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = ProjectionStore(client: client, logger: logger)
            var log = PushLog(client: client)
            let account = UUID()
            var phone = DeviceScript(account: account, detail: .full)
            var watch = DeviceScript(account: account, detail: .full)
            let (first, second) = (UUID(), UUID())
            try await log.push(phone, [phone.donate("soup-1", at: 10), phone.addVoice(first, phrase: "Order soup", to: "soup-1", at: 11)])
            try await log.push(watch, [watch.report(["com.example.tea"], at: 12), watch.addVoice(second, phrase: "order  SOUP!", to: "soup-1", at: 13)])

            let phoneView = try await store.fullView(account: account, device: phone.deviceId)
            #expect(phoneView.shortcuts[ShortcutID(bundleId: "com.example.soup", identifier: "soup-1")]?.donationCount == 1)
            #expect(phoneView.voiceShortcuts[first]?.status == .active)
            #expect(phoneView.voiceShortcuts[second]?.status == .phraseConflict)
            #expect(phoneView.voiceShortcuts[second]?.conflictsWith == first)
            let watchView = try await store.fullView(account: account, device: watch.deviceId)
            #expect(watchView.shortcuts.isEmpty)  // soup is not installed on the watch
            #expect(watchView.voiceShortcuts[first]?.appInstalled == false)
            #expect(watchView.voiceShortcuts[first]?.targetAvailable == true)
            let pull = try await store.pull(account: account, device: watch.deviceId, cursor: nil)
            #expect(pull.lastAcceptedSeq == 2)
            #expect(pull.maxHLC == HLCTimestamp(wallMillis: 13, counter: 2))
            // A cursor is bound to its account and device: the phone's own cursor gives a diff, the
            // same cursor in the hands of another device of the account (one that reads the same
            // unfiltered view) or of a device of another account gives the whole view.
            let phoneCursor = try await store.pull(account: account, device: phone.deviceId, cursor: nil).cursor
            #expect(try await !store.pull(account: account, device: phone.deviceId, cursor: phoneCursor).reset)
            let radio = UUID(), stranger = (account: UUID(), device: UUID())
            let sameViewer = try await store.pull(account: account, device: radio, cursor: phoneCursor)
            #expect(sameViewer.reset)
            #expect(DeviceView.empty.applying(sameViewer.changes) == phoneView)
            #expect(try await store.pull(account: stranger.account, device: stranger.device, cursor: phoneCursor).reset)
        }
    }

    /// An account behind its head (events written as an import writes them) is folded by the
    /// maintenance from its folded version on, a batch at a time: each step includes exactly the
    /// versions it folded, and every donation is counted once.
    @Test func anAccountBehindIsFoldedFromItsFoldedVersionAndCountsEveryDonationOnce() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = ProjectionStore(client: client, logger: logger)
            var phone = DeviceScript(account: UUID(), detail: .full)
            let backlog = (0..<4).map { phone.donate("soup", at: 100 + Int64($0)) }
            try await writeBacklog(backlog, account: phone.account, client: client)
            #expect(try await store.head(account: phone.account) == (4, 0))
            #expect(try await !store.includes(version: 1, account: phone.account))
            let behind = try await store.status()
            #expect(behind.accountsBehind == 1 && behind.eventsBehind == 4)

            // A push meanwhile is stored, not folded: the account's views wait for the maintenance.
            var log = PushLog(client: client)
            let pushed = try await log.push(phone, [phone.donate("soup", at: 200)])
            #expect(!pushed.folded && pushed.version == 5)
            #expect(try await store.status().eventsBehind == 5)

            let worker = SyncWorker(queue: ProjectionStore(client: client, logger: logger), logger: logger, batchSize: 2)
            #expect(try await worker.foldNext())
            #expect(try await store.head(account: phone.account) == (5, 2))
            #expect(try await store.includes(version: 2, account: phone.account))
            #expect(try await !store.includes(version: 3, account: phone.account))
            #expect(try await store.foldAll(batchSize: 2) == 2)
            #expect(try await store.head(account: phone.account) == (5, 5))

            let view = try await store.fullView(account: phone.account, device: phone.deviceId)
            #expect(view.shortcuts[ShortcutID(bundleId: "com.example.soup", identifier: "soup")]?.donationCount == 5)
            let status = try await store.status()
            #expect(status.accountsBehind == 0 && status.eventsBehind == 0)
            // Current again: the next push folds itself.
            #expect(try await log.push(phone, [phone.donate("soup", at: 300)]).folded)
        }
    }

    /// The maintenance announces each account it folded with the version its views include now,
    /// and names no sender (every server pokes the account's streams).
    @Test func aMaintenanceFoldNotifiesTheAccountWithTheVersionItsViewsInclude() async throws {
        try await TestDatabase.withClient { client, url in
            let store = ProjectionStore(client: client, logger: logger)
            var phone = DeviceScript(account: UUID(), detail: .full)
            let account = phone.account
            let backlog = [phone.donate("soup-1", at: 10), phone.donate("soup-2", at: 20)]
            // A fold that does not notify must fail the test, not leave it waiting.
            try await within(.seconds(30), "a notification of each version") {
                try await withConnection(url) { listener in
                    try await listener.listen(on: ProjectionNotification.channel) { notifications in
                        var received = notifications.makeAsyncIterator()
                        try await writeBacklog(backlog, account: account, client: client)
                        #expect(try await store.foldAll(batchSize: 1) == 2)
                        for version in [Int64(1), 2] {
                            let notification = try #require(try await received.next())
                            let parsed = try #require(ProjectionNotification(payload: notification.payload))
                            #expect(parsed.sender == nil)
                            #expect(parsed.versions == [account: version])
                        }
                    }
                }
            }
        }
    }

    @Test func aRebuildFromTheLogEqualsTheLiveProjectionsRowForRow() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = ProjectionStore(client: client, logger: logger)
            var log = PushLog(client: client)
            var scenario = Scenario(seed: 42, accounts: 3, devicesPerAccount: 3)
            for _ in 0..<80 {
                let (device, events) = scenario.push()
                try await log.push(device, events)
            }
            let total = log.accepted.values.map(\.count).reduce(0, +)

            let seen = ProgressLog()
            let verification = try await store.rebuilder.verify() { await seen.record($0) }
            #expect(verification.differences == [])
            #expect(verification.accountsCompared == 3 && verification.accountsBehind == 0)
            #expect(await seen.last?.processed == total)
            #expect(await seen.last?.total == total)
            let processed = await seen.reports.map(\.processed)
            #expect(processed == processed.sorted())

            // The verifier does see a live row that went wrong.
            try await client.query("""
                UPDATE projection_shortcuts SET view = jsonb_set(view, '{title}', '"tampered"')
                WHERE ctid = (SELECT ctid FROM projection_shortcuts WHERE view IS NOT NULL LIMIT 1)
                """)
            let tampered = try await store.rebuilder.verify()
            #expect(tampered.differences.count == 1)
            #expect(tampered.differences.first?.kind == .shortcut)

            // Promoting the rebuild repairs it and starts a new epoch: old cursors get the whole view.
            let device = scenario.devices[0]
            let before = try await store.pull(account: device.account, device: device.deviceId, cursor: nil)
            let epoch = try await store.status().epoch
            try await store.rebuilder.promote()
            #expect(try await store.rebuilder.verify().differences == [])
            #expect(try await store.status().epoch == epoch + 1)
            let after = try await store.pull(account: device.account, device: device.deviceId, cursor: before.cursor)
            #expect(after.reset)
            #expect(DeviceView.empty.applying(after.changes) == log.expectedView(account: device.account, device: device.deviceId))
        }
    }
}

/// Collects a rebuild's progress reports.
actor ProgressLog {
    private(set) var reports: [RebuildProgress] = []
    var last: RebuildProgress? { reports.last }
    func record(_ progress: RebuildProgress) { reports.append(progress) }
}

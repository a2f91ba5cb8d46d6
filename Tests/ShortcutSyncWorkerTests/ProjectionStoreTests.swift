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

/// The projections folded batch by batch, and the pulls read from them (DESIGN §5, §6).
@Suite struct ProjectionStoreTests {
    @Test func cursorPullsAppliedToThePreviousViewEqualAFreshPull() async throws {
        try await TestDatabase.withClient { client, url in
            let store = ProjectionStore(client: client, logger: logger)
            var log = PushLog(client: client)
            let account = UUID()
            var phone = DeviceScript(account: account, detail: .full)
            var watch = DeviceScript(account: account, detail: .full)
            let quiet = DeviceScript(account: account, detail: .full)  // pulls, never pushes
            let (first, second) = (UUID(), UUID())
            var wall: Int64 = 1_763_712_000_000
            func tick() -> Int64 { wall += 10; return wall }

            // Each round is pushed, folded in small batches, then pulled by every device.
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
            try await withConnection(url) { connection in
                for round in rounds {
                    for (device, events) in round { try await log.push(device, events) }
                    _ = try await store.foldAll(on: connection, batchSize: 3)
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
        try await TestDatabase.withClient { client, url in
            let store = ProjectionStore(client: client, logger: logger)
            var log = PushLog(client: client)
            let account = UUID()
            var phone = DeviceScript(account: account, detail: .full)
            var watch = DeviceScript(account: account, detail: .full)
            let (first, second) = (UUID(), UUID())
            try await log.push(phone, [phone.donate("soup-1", at: 10), phone.addVoice(first, phrase: "Order soup", to: "soup-1", at: 11)])
            try await log.push(watch, [watch.report(["com.example.tea"], at: 12), watch.addVoice(second, phrase: "order  SOUP!", to: "soup-1", at: 13)])
            try await withConnection(url) { connection in _ = try await store.foldAll(on: connection) }

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

    @Test func aBatchFromAStaleCheckpointWritesNothingAndTheNextOneCountsEveryDonationOnce() async throws {
        try await TestDatabase.withClient { client, url in
            let store = ProjectionStore(client: client, logger: logger)
            let events = PostgresEventStore(client: client, logger: logger)
            var log = PushLog(client: client)
            var phone = DeviceScript(account: UUID(), detail: .full)
            try await log.push(phone, (0..<4).map { phone.donate("soup", at: 100 + Int64($0)) })
            try await withConnection(url) { connection in
                let firstBatch = try await events.readLogEventually(after: .start, count: 2)
                try await store.apply(firstBatch, from: .start, on: connection)
                let counts = try await projectionRowCounts(client)
                let checkpoint = try await store.checkpoint()
                #expect(checkpoint.log == firstBatch.last!.checkpoint)

                // A batch that does not start where the checkpoint is: refused whole.
                let rest = try await events.readLogEventually(after: firstBatch.last!.checkpoint, count: 2)
                await #expect(throws: ProjectionError.checkpointMoved(expected: .start, found: checkpoint.log)) {
                    try await store.apply(rest, from: .start, on: connection)
                }
                #expect(try await projectionRowCounts(client) == counts)
                #expect(try await store.checkpoint() == checkpoint)
                #expect(try await store.isProcessed(position: firstBatch.last!.position, account: firstBatch.last!.accountId))
                #expect(try await !store.isProcessed(position: rest.last!.position, account: rest.last!.accountId))

                // The connection is still usable, and the right batch folds every donation once.
                try await store.apply(rest, from: checkpoint.log, on: connection)
                #expect(try await store.isProcessed(position: rest.last!.position, account: rest.last!.accountId))
                // A position where the account has no event leaves nothing to wait for.
                #expect(try await store.isProcessed(position: rest.last!.position + 1000, account: rest.last!.accountId))
            }
            let view = try await store.fullView(account: phone.account, device: phone.deviceId)
            #expect(view.shortcuts[ShortcutID(bundleId: "com.example.soup", identifier: "soup")]?.donationCount == 4)
            let status = try await store.status()
            #expect(status.pendingEvents == 0)
            #expect(status.headPosition == status.checkpoint.log.position)
        }
    }

    @Test func notificationsNameTheAccountWhoseViewsChangedWithItsVersionAndPosition() async throws {
        try await TestDatabase.withClient { client, url in
            let store = ProjectionStore(client: client, logger: logger)
            var log = PushLog(client: client)
            let account = UUID()
            var phone = DeviceScript(account: account, detail: .full)
            var watch = DeviceScript(account: account, detail: .full)
            var other = DeviceScript(account: UUID(), detail: .full)
            try await withConnection(url) { listener in
                try await listener.listen(on: ProjectionNotification.channel) { notifications in
                    var received = notifications.makeAsyncIterator()
                    func next() async throws -> ProjectionNotification {
                        let notification = try #require(try await received.next())
                        return try JSONDecoder().decode(ProjectionNotification.self, from: Data(notification.payload.utf8))
                    }
                    try await withConnection(url) { connection in
                        // 1: a donation changes the one view there is.
                        try await log.push(phone, [phone.donate("soup-1", at: 10)])
                        let sent = try await store.foldAll(on: connection)
                        #expect(sent.count == 1)
                        let first = try await next()
                        #expect(first == sent.first)
                        #expect(first.accountId == account)
                        #expect(first.position == (try await store.checkpoint()).log.position)

                        // 2: the watch reports soup installed: the account's items are unchanged (same
                        // version), but the watch's apps changed, so its streams are poked.
                        try await log.push(watch, [watch.report(["com.example.soup"], at: 20)])
                        _ = try await store.foldAll(on: connection)
                        let second = try await next()
                        #expect(second.accountId == account)
                        #expect(second.version == first.version)

                        // 3: a donation changes the account's view; another account whose deletion
                        // covers nothing changed no view and sends nothing.
                        try await log.push(phone, [phone.donate("map-1", bundle: "com.example.maps", at: 30)])
                        try await log.push(other, [other.delete(.identifiers(["nothing"]), at: 30)])
                        let third = try await store.foldAll(on: connection)
                        #expect(third.map(\.accountId) == [account])
                        let delivered = try await next()
                        #expect(delivered.accountId == account)
                        #expect(delivered.version == second.version + 1)
                    }
                }
            }
        }
    }

    @Test func aRebuildFromTheLogEqualsTheLiveProjectionsRowForRow() async throws {
        try await TestDatabase.withClient { client, url in
            let store = ProjectionStore(client: client, logger: logger)
            var log = PushLog(client: client)
            var scenario = Scenario(seed: 42, accounts: 3, devicesPerAccount: 3)
            for _ in 0..<80 {
                let (device, events) = scenario.push()
                try await log.push(device, events)
            }
            try await withConnection(url) { connection in _ = try await store.foldAll(on: connection, batchSize: 7) }

            let seen = ProgressLog()
            let verification = try await store.rebuilder.verify() { await seen.record($0) }
            #expect(verification.differences == [])
            #expect(verification.checkpoint == (try await store.checkpoint()).log)
            #expect(await seen.last?.processed == log.accepted.values.map(\.count).reduce(0, +))

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
            let epoch = try await store.checkpoint().epoch
            try await store.rebuilder.promote()
            #expect(try await store.rebuilder.verify().differences == [])
            #expect(try await store.checkpoint().epoch == epoch + 1)
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

import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import ShortcutSyncWorker
import Testing

private let logger = TestDatabase.shared.logger

/// The sync worker as a service: following the log, surviving failures, handing over (DESIGN §6).
@Suite struct SyncWorkerTests {
    /// Every device's pull equals what the domain fold gives for its account's events.
    func expectViewsMatchTheDomain(_ store: ProjectionStore, _ log: PushLog, devices: [DeviceScript]) async throws {
        for device in devices {
            let view = try await store.fullView(account: device.account, device: device.deviceId)
            #expect(view == log.expectedView(account: device.account, device: device.deviceId), "device \(device.deviceId)")
        }
    }

    @Test func theWorkerFoldsEveryAccountIntoTheViewsTheDomainGives() async throws {
        try await TestDatabase.withClient { client, url in
            let store = ProjectionStore(client: client, logger: logger)
            var log = PushLog(client: client)
            var scenario = Scenario(seed: 1, accounts: 3, devicesPerAccount: 3)
            let worker = try SyncWorker(client: client, databaseURL: url, logger: logger, batchSize: 17)
            try await whileRunning(worker) {
                for round in 0..<60 {
                    let (device, events) = scenario.push()
                    try await log.push(device, events)
                    worker.nudge()
                    if round % 20 == 0 { try await Task.sleep(for: .milliseconds(20)) }
                }
                try await store.waitUntilCaughtUp()
                #expect(worker.role == .active)
            }
            #expect(worker.role == .stopped)
            let strangers = Set(scenario.devices.map(\.account)).map { DeviceScript(account: $0, detail: .full) }
            try await expectViewsMatchTheDomain(store, log, devices: scenario.devices + strangers)
        }
    }

    /// An account whose 300 devices reported their apps: a voice shortcut reaches every one of
    /// them, the other accounts keep syncing meanwhile, and the projections hold one row per item.
    /// (The notification names only the account: one that listed the devices passed PostgreSQL's
    /// 8000-byte limit, and the worker retried that batch forever, for every account.)
    @Test func threeHundredDevicesThatReportedTheirAppsAllSeeANewVoiceShortcut() async throws {
        try await TestDatabase.withClient { client, url in
            let store = ProjectionStore(client: client, logger: logger)
            var log = PushLog(client: client)
            let account = UUID()
            var devices = (0..<300).map { _ in DeviceScript(account: account, detail: .full) }
            var other = DeviceScript(account: UUID(), detail: .full)
            var teaOnly = DeviceScript(account: account, detail: .full)
            let voice = UUID()
            let worker = try SyncWorker(client: client, databaseURL: url, logger: logger, batchSize: 1000)
            try await whileRunning(worker) {
                for index in devices.indices {
                    try await log.push(devices[index], [devices[index].report(["com.example.soup"], at: 10)])
                }
                try await log.push(teaOnly, [teaOnly.report(["com.example.tea"], at: 10)])
                try await log.push(devices[0], [devices[0].donate("soup", at: 20), devices[0].addVoice(voice, phrase: "Order soup", to: "soup", at: 21)])
                try await log.push(other, [other.donate("tea", bundle: "com.example.tea", at: 22)])
                try await store.waitUntilCaughtUp()
                try await log.push(other, [other.donate("more-tea", bundle: "com.example.tea", at: 23)])
                try await store.waitUntilCaughtUp()
            }
            for device in devices {
                let view = try await store.fullView(account: account, device: device.deviceId)
                #expect(view.voiceShortcuts[voice]?.status == .active, "device \(device.deviceId)")
                #expect(view.voiceShortcuts[voice]?.appInstalled == true, "device \(device.deviceId)")
            }
            #expect(try await store.fullView(account: other.account, device: other.deviceId).shortcuts.count == 2)
            // A device without the app sees the voice shortcut, not the shortcut.
            let teaView = try await store.fullView(account: account, device: teaOnly.deviceId)
            #expect(teaView.shortcuts.isEmpty)
            #expect(teaView.voiceShortcuts[voice]?.appInstalled == false)
            try await expectViewsMatchTheDomain(store, log, devices: [devices[0], devices[299], teaOnly, other])
            // One row per item and account, however many devices: 2 accounts, 1 + 2 shortcuts, 1 voice shortcut.
            #expect(try await projectionRowCounts(client) == [2, 3, 1])
        }
    }

    @Test func aNudgeWakesAnIdleWorkerBeforeItsPoll() async throws {
        try await TestDatabase.withClient { client, url in
            let store = ProjectionStore(client: client, logger: logger)
            var log = PushLog(client: client)
            var phone = DeviceScript(account: UUID(), detail: .full)
            let worker = try SyncWorker(client: client, databaseURL: url, logger: logger, idlePoll: .seconds(3600))
            try await whileRunning(worker) {
                try await eventually("the worker is active") { worker.role == .active }
                try await Task.sleep(for: .milliseconds(50))  // let it go idle
                let pushed = try await log.push(phone, [phone.donate("soup", at: 1)])
                // Only nudges wake it: the poll is an hour. (A nudge can find the event not yet
                // readable while another transaction of the cluster is open, so nudge until done.)
                try await eventually("the nudged worker folded the push", timeout: .seconds(10)) {
                    worker.nudge()
                    return try await store.isProcessed(position: pushed.position, account: phone.account)
                }
            }
        }
    }

    @Test func aWorkerWhoseConnectionIsKilledResumesWithoutLosingOrDoublingAnEvent() async throws {
        try await TestDatabase.withClient { client, url in
            let store = ProjectionStore(client: client, logger: logger)
            var log = PushLog(client: client)
            var phone = DeviceScript(account: UUID(), detail: .full)
            var scenario = Scenario(seed: 3, accounts: 2, devicesPerAccount: 2)
            let worker = try {
                var worker = try SyncWorker(client: client, databaseURL: url, logger: logger, batchSize: 5, idlePoll: .milliseconds(5))
                worker.reconnectDelay = (.milliseconds(10), .milliseconds(50))
                return worker
            }()
            let donations = 120
            try await whileRunning(worker) {
                var kills = 0
                for index in 0..<donations {
                    try await log.push(phone, [phone.donate("soup", at: Int64(index))])
                    if index % 10 == 0 {
                        let (device, events) = scenario.push()
                        try await log.push(device, events)
                    }
                    if index % 30 == 15 {
                        // Kill the active worker's session, whatever it is doing (often mid-batch).
                        try await eventually("the worker holds the lock") { try await lockHolder(client) != nil }
                        try await client.query("SELECT pg_terminate_backend(\(try await lockHolder(client)!))")
                        kills += 1
                    }
                }
                #expect(kills == 4)
                try await store.waitUntilCaughtUp()
            }
            let view = try await store.fullView(account: phone.account, device: phone.deviceId)
            #expect(view.shortcuts[ShortcutID(bundleId: "com.example.soup", identifier: "soup")]?.donationCount == donations)
            try await expectViewsMatchTheDomain(store, log, devices: scenario.devices + [phone])
            #expect(try await store.rebuilder.verify().differences == [])
        }
    }

    @Test func aWorkerStoppedBetweenBatchesAndStartedAgainEndsAsOneUninterruptedRun() async throws {
        try await TestDatabase.withClient { client, url in
            let store = ProjectionStore(client: client, logger: logger)
            var log = PushLog(client: client)
            var scenario = Scenario(seed: 11, accounts: 2, devicesPerAccount: 3)
            for _ in 0..<60 {
                let (device, events) = scenario.push()
                try await log.push(device, events)
            }
            let total = log.accepted.values.map(\.count).reduce(0, +)
            let first = try SyncWorker(client: client, databaseURL: url, logger: logger, batchSize: 10)
            try await whileRunning(first) {
                try await eventually("some batches are folded") { try await store.checkpoint().log.position > 0 }
            }
            let stoppedAt = try await store.status()
            #expect(first.role == .stopped)

            for _ in 0..<30 {
                let (device, events) = scenario.push()
                try await log.push(device, events)
            }
            let second = try SyncWorker(client: client, databaseURL: url, logger: logger, batchSize: 10)
            try await whileRunning(second) { try await store.waitUntilCaughtUp() }

            #expect(stoppedAt.pendingEvents < Int64(log.accepted.values.map(\.count).reduce(0, +)))
            #expect(total > 0)
            // The rebuild is one uninterrupted run over the same log.
            #expect(try await store.rebuilder.verify().differences == [])
            try await expectViewsMatchTheDomain(store, log, devices: scenario.devices)
        }
    }

    @Test func onlyOneOfTwoWorkersFoldsAndTheOtherTakesOverWhenItStops() async throws {
        try await TestDatabase.withClient { client, url in
            let store = ProjectionStore(client: client, logger: logger)
            var log = PushLog(client: client)
            var scenario = Scenario(seed: 5, accounts: 2, devicesPerAccount: 2)
            let standby = try {
                var worker = try SyncWorker(client: client, databaseURL: url, logger: logger, batchSize: 7)
                worker.standbyPoll = .milliseconds(50)
                return worker
            }()
            let active = try SyncWorker(client: client, databaseURL: url, logger: logger, batchSize: 7)

            let (standbyMayStart, startStandby) = AsyncStream<Void>.makeStream()
            try await withThrowingTaskGroup(of: Void.self) { group in
                // The standby worker starts once the other holds the lock.
                group.addTask {
                    for await _ in standbyMayStart { break }
                    try await standby.run()
                }
                defer { group.cancelAll() }
                try await whileRunning(active) {
                    try await eventually("the first worker is active") { active.role == .active }
                    startStandby.yield()
                    try await eventually("the second is on standby") { standby.role == .standby }
                    for _ in 0..<30 {
                        let (device, events) = scenario.push()
                        try await log.push(device, events)
                    }
                    try await store.waitUntilCaughtUp()
                    #expect(standby.role == .standby)
                    #expect(try await advisoryLockHolders(client) == 1)
                }
                #expect(active.role == .stopped)
                for _ in 0..<30 {
                    let (device, events) = scenario.push()
                    try await log.push(device, events)
                }
                try await eventually("the standby worker takes over") { standby.role == .active }
                try await store.waitUntilCaughtUp()
            }
            try await expectViewsMatchTheDomain(store, log, devices: scenario.devices)
            #expect(try await store.rebuilder.verify().differences == [])
        }
    }
}

/// The backend pid of the session holding the worker's advisory lock.
func lockHolder(_ client: PostgresClient) async throws -> Int32? {
    try await client.query("""
        SELECT pid FROM pg_locks
        WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND ((classid::int8 << 32) | objid::int8) = \(SyncWorker.advisoryLockKey)
        """).decode(Int32.self).collectAll().first
}

/// How many sessions hold the worker's advisory lock.
func advisoryLockHolders(_ client: PostgresClient) async throws -> Int {
    try await client.query("""
        SELECT count(*)::int8 FROM pg_locks
        WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND ((classid::int8 << 32) | objid::int8) = \(SyncWorker.advisoryLockKey)
        """).decode(Int64.self).collectAll().first.map(Int.init) ?? 0
}

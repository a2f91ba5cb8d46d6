import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import ShortcutSyncChildProcess
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import ShortcutSyncWorker
import Testing

private let logger = TestDatabase.shared.logger

/// The maintenance tasks (DESIGN §6): pushes fold themselves, and any number of tasks, in any
/// number of processes, fold the accounts left behind their head — none special, none needed by
/// the others.
@Suite struct SyncWorkerTests {
    /// Histories of `accounts` accounts written as an import writes them (unfolded), and what the
    /// domain says each device sees.
    static func backlog(seed: UInt64, accounts: Int, pushes: Int, client: PostgresClient) async throws -> (devices: [DeviceScript], log: [UUID: [AcceptedEvent]]) {
        var scenario = Scenario(seed: seed, accounts: accounts, devicesPerAccount: 3)
        var log: [UUID: [AcceptedEvent]] = [:]
        for _ in 0..<pushes {
            let (device, events) = scenario.push(maxEvents: 12)
            log[device.account, default: []] += events
        }
        for (account, events) in log { try await writeBacklog(events, account: account, client: client) }
        return (scenario.devices, log)
    }

    static func expectViewsMatchTheDomain(_ client: PostgresClient, devices: [DeviceScript], log: [UUID: [AcceptedEvent]]) async throws {
        let store = ProjectionStore(client: client, logger: logger)
        for device in devices {
            let view = try await store.fullView(account: device.account, device: device.deviceId)
            #expect(view == AccountState(folding: log[device.account] ?? []).view(forDevice: device.deviceId), "device \(device.deviceId)")
        }
    }

    @Test func threeTasksFoldABacklogOfManyAccountsIntoTheViewsTheDomainGives() async throws {
        try await TestDatabase.withClient { client, _ in
            let (devices, log) = try await Self.backlog(seed: 1, accounts: 12, pushes: 300, client: client)
            let store = ProjectionStore(client: client, logger: logger)
            #expect(try await store.status().accountsBehind == 12)
            let worker = SyncWorker(queue: ProjectionStore(client: client, logger: logger), logger: logger, batchSize: 17, tasks: 3, idlePoll: .milliseconds(20))
            try await whileRunning(worker) {
                try await eventually("the backlog is folded", timeout: .seconds(60)) { try await store.status().accountsBehind == 0 }
            }
            try await Self.expectViewsMatchTheDomain(client, devices: devices, log: log)
            #expect(try await store.rebuilder.verify().differences == [])
        }
    }

    /// A push to an account that is behind is stored, not folded (its earlier events are not yet),
    /// and the tasks fold it with the rest; then pushes fold themselves again.
    @Test func aPushToAnAccountBehindIsFoldedByTheTasksAndThenPushesFoldThemselves() async throws {
        try await TestDatabase.withClient { client, _ in
            var (devices, log) = try await Self.backlog(seed: 2, accounts: 1, pushes: 30, client: client)
            var device = devices[0]
            device.seq = Int64(log[device.account]!.filter { $0.deviceId == device.deviceId }.count)
            let events = PostgresEventStore(client: client, logger: logger)
            let late = [device.donate("late", at: 1_763_712_999_000)]
            let result = try await events.append(late.map(\.event), account: device.account, device: device.deviceId)
            #expect(result.appended == 1 && !result.folded)
            log[device.account]! += late
            let worker = SyncWorker(queue: ProjectionStore(client: client, logger: logger), logger: logger, batchSize: 7)
            while try await worker.foldNext() {}
            try await Self.expectViewsMatchTheDomain(client, devices: devices, log: log)

            let next = [device.donate("later", at: 1_763_712_999_100)]
            #expect(try await events.append(next.map(\.event), account: device.account, device: device.deviceId).folded)
            log[device.account]! += next
            try await Self.expectViewsMatchTheDomain(client, devices: devices, log: log)
        }
    }

    /// While one task holds an account (its transaction open), another takes a different one or
    /// none: `SKIP LOCKED`, never the same account twice at once.
    @Test func twoTasksNeverTakeTheSameAccount() async throws {
        try await TestDatabase.withClient { client, url in
            _ = try await Self.backlog(seed: 3, accounts: 2, pushes: 20, client: client)
            let rows = ProjectionRowStore(tables: .live, logger: logger)
            try await withConnection(url) { first in
                try await first.inTransaction(logger: logger) { first in
                    let held = try #require(try await rows.takeAccountBehind(on: first))
                    try await withConnection(url) { second in
                        try await second.inTransaction(logger: logger) { second in
                            let other = try #require(try await rows.takeAccountBehind(on: second))
                            #expect(other.accountId != held.accountId)
                            try await withConnection(url) { third in
                                try await third.inTransaction(logger: logger) { third in
                                    let none = try await rows.takeAccountBehind(on: third)
                                    #expect(none == nil)
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// A worker process killed with SIGKILL in the middle of its folds: nothing it did is half
    /// done, the others finish its accounts, nothing is folded twice (the views equal the domain's,
    /// donation counts included) and `verify` finds no difference.
    @Test func aWorkerProcessKilledMidFoldLeavesNothingHalfDone() async throws {
        try await TestDatabase.withClient { client, url in
            let (devices, log) = try await Self.backlog(seed: 4, accounts: 40, pushes: 2_000, client: client)
            let store = ProjectionStore(client: client, logger: logger)
            // One account's head held by the test until the kill: the worker passes it by (its
            // maintenance takes heads SKIP LOCKED), so that it cannot have finished every account
            // by the time the kill reaches it (twice, on a loaded machine, it had: once waiting for
            // five accounts, once for the first).
            let held = try #require(log.keys.first)
            try await withConnection(url) { holder in
                try await holder.query("BEGIN", logger: logger)
                try await holder.query("SELECT 1 FROM account_heads WHERE account_id = \(held) FOR UPDATE", logger: logger)
                let worker = try await CommandProcess(["worker", "--tasks", "2", "--log-level", "error"], environment: ["DATABASE_URL": url.urlString])
                defer { worker.forceStop() }
                // Killed at the first account it folded.
                try await eventually("the worker process has folded an account", timeout: .seconds(60)) {
                    try await store.status().accountsBehind < 40
                }
                worker.send(SIGKILL)
                // Gone before the others start: they must not race a worker that is still dying.
                try #require(try await worker.waitForExit(timeout: .seconds(10)), "the killed worker ended")
                try await holder.query("COMMIT", logger: logger)
            }
            #expect(try await store.status().accountsBehind > 0, "killed before the end")
            let others = SyncWorker(queue: ProjectionStore(client: client, logger: logger), logger: logger, batchSize: 100, tasks: 2)
            while try await others.foldNext() {}
            try await Self.expectViewsMatchTheDomain(client, devices: devices, log: log)
            #expect(try await store.rebuilder.verify().differences == [])
        }
    }
}

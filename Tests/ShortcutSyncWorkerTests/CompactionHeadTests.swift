import Foundation
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Synchronization
import Testing

private let logger = TestDatabase.shared.logger

/// Issue 65, item 1: a compaction folds the account's snapshot without its head, so that the
/// account's pushes are not held while it does (a million events took 25 s, every push of the
/// person waiting out its lock timeout). The first step is made to wait here on the snapshot's
/// table, which another session locks; meanwhile the account pushes.
@Suite struct CompactionHeadTests {
    @Test func aPushWhileTheSnapshotIsFoldedIsStoredAtOnceAndTheCompactionFoldsItAfter() async throws {
        try await TestDatabase.withClient { client, url in
            var scene = try await fortySoups(client)
            let (account, phone, store, projections) = (scene.account, scene.phone, scene.store, scene.projections)
            let tea = scene.phone.donate("tea", bundle: "com.example.tea", at: 5000).event, device = phone.deviceId
            let (compaction, pushed, answered) = try await whileTheSnapshotWaits(url: url, client: client, compacting: {
                try await projections.compact(account: account, through: 40)
            }, pushing: {
                try await store.append([tea], account: account, device: device)
            })
            #expect(answered, "the push was stored while the compaction folded the snapshot")
            #expect(pushed.appended == 1 && pushed.version == 41)
            #expect(compaction.outcome == .compacted && compaction.horizonVersion == 40, "\(compaction)")
            #expect(compaction.eventsRemoved > 30, "\(compaction)")
            #expect(compaction.headHeld > .zero)

            // The views hold the push and every soup; a rebuild from the snapshot equals them.
            let view = try #require(try await projections.fullViews(account: account, devices: [phone.deviceId]).first)
            #expect(view.shortcuts.values.map(\.donationCount).sorted() == [1, 10, 10, 10, 10])
            let verified = try await ProjectionRebuilder(client: client, logger: logger).verify()
            #expect(verified.differences == [], "\(verified.differences.prefix(3))")
            // The push after the horizon is in the log.
            let kept = try await client.query("SELECT count(*) FROM events WHERE account_id = \(account) AND version = 41", logger: logger)
                .decode(Int64.self).collectAll()
            #expect(kept == [1])
        }
    }

    /// A device offline since before the cut pushes a donation older than it while the snapshot is
    /// folded: the cut is no longer clean, and the compaction undoes its first step.
    @Test func anOlderEventPushedMeanwhileLeavesNoCleanCutAndNothingCompacted() async throws {
        try await TestDatabase.withClient { client, url in
            var scene = try await fortySoups(client)
            let (account, store, projections) = (scene.account, scene.store, scene.projections)
            let late = scene.watch.donate("soup-0", at: 1005).event, device = scene.watch.deviceId
            let (compaction, pushed, answered) = try await whileTheSnapshotWaits(url: url, client: client, compacting: {
                try await projections.compact(account: account, through: 40)
            }, pushing: {
                try await store.append([late], account: account, device: device)
            })
            #expect(answered && pushed.appended == 1)
            #expect(compaction.outcome == .noCleanCut && compaction.horizonVersion == 0 && compaction.eventsRemoved == 0, "\(compaction)")
            #expect(compaction.headHeld == .zero)
            let events = try await client.query("SELECT count(*) FROM events WHERE account_id = \(account)", logger: logger)
                .decode(Int64.self).collectAll()
            #expect(events == [41], "nothing left the log")
            let snapshots = try await client.query("SELECT count(*) FROM snapshot.projection_donation_groups WHERE account_id = \(account)", logger: logger)
                .decode(Int64.self).collectAll()
            #expect(snapshots == [0], "nor was a snapshot kept")
            let verified = try await ProjectionRebuilder(client: client, logger: logger).verify()
            #expect(verified.differences == [], "\(verified.differences.prefix(3))")
            // Compacted again, it cuts where the late donation allows: after the first event (1000).
            let again = try await projections.compact(account: account, through: 40)
            #expect(again.outcome == .compacted && again.horizonVersion == 1, "\(again)")
        }
    }

    /// The account parked meanwhile (a push its fold could not take, as an import leaves it
    /// behind): the compaction finds it behind under the head and undoes its first step.
    @Test func anAccountParkedMeanwhileIsBehindAndNothingCompacted() async throws {
        try await TestDatabase.withClient { client, url in
            let scene = try await fortySoups(client)
            let (account, projections) = (scene.account, scene.projections)
            let (compaction, _, answered) = try await whileTheSnapshotWaits(url: url, client: client, compacting: {
                try await projections.compact(account: account, through: 40)
            }, pushing: {
                try await client.query("""
                    INSERT INTO projection_parked_accounts (account_id, failed_version, error) VALUES (\(account), 41, 'parked by the test')
                    """, logger: logger)
            })
            #expect(answered)
            #expect(compaction.outcome == .behind && compaction.horizonVersion == 0 && compaction.eventsRemoved == 0, "\(compaction)")
            let events = try await client.query("SELECT count(*) FROM events WHERE account_id = \(account)", logger: logger)
                .decode(Int64.self).collectAll()
            #expect(events == [40], "nothing left the log")
        }
    }

    /// An account whose phone pushed versions 1…40 (four soups, one a push, at 1000…1390) and
    /// whose watch has pushed nothing yet, with the stores the tests use.
    struct Scene {
        var phone: DeviceScript, watch: DeviceScript
        let store: PostgresEventStore, projections: ProjectionStore
        var account: UUID { phone.account }
    }

    private func fortySoups(_ client: PostgresClient) async throws -> Scene {
        let account = UUID()
        var scene = Scene(phone: DeviceScript(account: account), watch: DeviceScript(account: account),
                          store: PostgresEventStore(client: client, logger: logger), projections: ProjectionStore(client: client, logger: logger))
        try await register([scene.phone, scene.watch], client: client)
        for index in 0..<40 {
            _ = try await scene.store.append([scene.phone.donate("soup-\(index % 4)", at: 1000 + Int64(index) * 10).event],
                                             account: account, device: scene.phone.deviceId)
        }
        return scene
    }

    /// `compacting` run while another session holds the snapshot's donation groups, so that it
    /// waits in its first step; once it waits, `pushing`, given 5 s to be answered; then the lock
    /// is let go. What each gave, and whether the push was answered while the compaction waited.
    /// The lock is let go whatever happens, so that neither waits for ever.
    private func whileTheSnapshotWaits<Compacted: Sendable, Pushed: Sendable>(
        url: DatabaseURL, client: PostgresClient,
        compacting: @escaping @Sendable () async throws -> Compacted,
        pushing: @escaping @Sendable () async throws -> Pushed
    ) async throws -> (Compacted, Pushed, answered: Bool) {
        let holder = try await PostgresConnection.connect(configuration: try url.connectionConfiguration(), id: 11, logger: logger)
        try await holder.query("BEGIN", logger: logger)
        try await holder.query("LOCK TABLE snapshot.projection_donation_groups IN ACCESS EXCLUSIVE MODE", logger: logger)
        let compaction = Task { try await compacting() }
        let answered = Atomic(false)
        let push: Task<Pushed, any Error>
        do {
            try await eventually("the compaction waits for the snapshot's table") {
                // This database's snapshot table (the suite's databases share one cluster).
                let waiting = try await client.query("""
                    SELECT count(*) FROM pg_locks l
                    WHERE l.relation = 'snapshot.projection_donation_groups'::regclass AND NOT l.granted
                      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                    """, logger: logger).decode(Int64.self).collectAll().first ?? 0
                return waiting > 0
            }
            // Only now: pushed before the compaction reached the table, the push (or the parking)
            // would be seen by its start instead, and the compaction would never wait there.
            push = Task {
                defer { answered.store(true, ordering: .sequentiallyConsistent) }
                return try await pushing()
            }
            try? await eventually("the push is answered while the compaction waits", timeout: .seconds(5)) {
                answered.load(ordering: .sequentiallyConsistent)
            }
        } catch {
            try? await holder.query("ROLLBACK", logger: logger)
            try? await holder.close()
            _ = try? await compaction.value
            throw error
        }
        let answeredWhileWaiting = answered.load(ordering: .sequentiallyConsistent)
        try await holder.query("COMMIT", logger: logger)
        try? await holder.close()
        return (try await compaction.value, try await push.value, answeredWhileWaiting)
    }
}

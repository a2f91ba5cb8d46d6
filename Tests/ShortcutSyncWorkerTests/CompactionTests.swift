import Foundation
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

private let logger = TestDatabase.shared.logger

/// Compacting an account's history (issue 58, DESIGN §3 "Across the horizon") on PostgreSQL: the
/// log loses its events up to a clean cut, the views do not change, a late event is folded (and
/// recorded) just after the horizon, a retry of a device's push is still a retry, and a
/// rebuild from the snapshot equals the live rows.
@Suite struct CompactionTests {
    /// With the compaction's chunks as large as usual (every part of the history read at once),
    /// and of 4 events (issue 65, item 1: the history and the events after the horizon folded a
    /// chunk at a time, the latter into the snapshot's tables and rolled back).
    @Test(arguments: [10_000, 4])
    func compactingKeepsTheViewsAndALateDeletionCoversEverythingCompacted(chunk: Int = 10_000) async throws {
        try await TestDatabase.withClient { client, _ in
            let account = UUID()
            var phone = DeviceScript(account: account), watch = DeviceScript(account: account)
            try await register([phone, watch], client: client)
            let store = PostgresEventStore(client: client, logger: logger)
            var projections = ProjectionStore(client: client, logger: logger)
            projections.compactionChunk = chunk
            func push(_ events: [AcceptedEvent], _ device: UUID) async throws -> AppendResult {
                try await store.append(events.map(\.event), account: account, device: device)
            }
            func views() async throws -> [DeviceView] {
                try await projections.fullViews(account: account, devices: [phone.deviceId, watch.deviceId])
            }
            func events() async throws -> Int64 {
                try await client.query("SELECT count(*) FROM events WHERE account_id = \(account)", logger: logger)
                    .decode(Int64.self).collectAll().first ?? 0
            }

            // Versions 1…40: the phone donates four soups, one a push, at 1000…1390.
            for index in 0..<40 { _ = try await push([phone.donate("soup-\(index % 4)", at: 1000 + Int64(index) * 10)], phone.deviceId) }
            // 41, 42: the watch deletes soup-1 among them (at 1205) and donates tea (at 1300), in one push.
            let watchPush = [watch.delete(.identifiers(["soup-1"]), at: 1205), watch.donate("tea", bundle: "com.example.tea", at: 1300)]
            _ = try await push(watchPush, watch.deviceId)
            // 43…52: later donations of the phone.
            for index in 0..<10 { _ = try await push([phone.donate("soup-\(index % 4)", at: 2000 + Int64(index) * 10)], phone.deviceId) }
            let before = try await views()
            #expect(before[0].shortcuts.count == 5)

            // Through 40 is asked: the watch's deletion (41, at 1205) is older than every donation
            // from 22 on (1210…), so the last clean cut at or below 40 is 21.
            let early = try await projections.compact(account: account, through: 40, dryRun: true)
            #expect(early.outcome == .compacted && early.horizonVersion == 21)
            // Through 45: a clean cut (46… are later than everything up to 45).
            let dry = try await projections.compact(account: account, through: 45, dryRun: true)
            #expect(dry.outcome == .compacted && dry.dryRun && dry.eventsRemoved > 0 && dry.horizonVersion == 45)
            #expect(try await events() == 52, "a dry run removes nothing")
            let compaction = try await projections.compact(account: account, through: 45)
            #expect(compaction.outcome == .compacted)
            #expect(compaction.horizonVersion == 45)
            #expect(compaction.eventsRemoved == dry.eventsRemoved && compaction.bytesRemoved == dry.bytesRemoved)
            // Kept: the latest donation of each of the five groups and each device's last event.
            #expect(try await events() == 52 - Int64(compaction.eventsRemoved))
            #expect(compaction.eventsKept <= 5 + 2, "\(compaction)")
            #expect(try await views() == before, "compacting changes no view")
            #expect(try await projections.compact(account: account, through: 45).outcome == .nothingOlder)

            // A rebuild starts from the snapshot: it equals the live rows.
            let rebuilder = ProjectionRebuilder(client: client, logger: logger)
            let verified = try await rebuilder.verify()
            #expect(verified.differences == [], "\(verified.differences.prefix(3))")

            // The watch's last push again (a lost answer): a retry, nothing stored.
            #expect(try await push(watchPush, watch.deviceId).appended == 0)

            // Offline since before the horizon, the watch deletes every soup at 1100: folded just
            // after the horizon, it covers every compacted soup donation, and the phone's after
            // the horizon older than its clock there; the later ones stay.
            let late = try await push([watch.delete(.all, at: 1100)], watch.deviceId)
            #expect(late.appended == 1 && late.version == 53)
            let clock = try await client.query("SELECT hlc_wall, hlc_counter FROM events WHERE account_id = \(account) AND version = 53",
                                               logger: logger).decode((Int64, Int64).self).collectAll().first
            let horizonKey = 2020  // version 45: the phone's donation at 2000 + 2 × 10
            #expect(clock.map { [$0.0, $0.1] } == [Int64(horizonKey), 1], "recorded at the clock just after the horizon")
            let after = try await views()
            let soups = after[0].shortcuts.filter { $0.key.bundleId == "com.example.soup" }
            // Donations after the horizon: versions 46…52, at 2030…2090, of soup-3, 0, 1, 2, 3, 0, 1.
            #expect(soups.mapValues(\.donationCount) == [
                ShortcutID(bundleId: "com.example.soup", identifier: "soup-0"): 2,
                ShortcutID(bundleId: "com.example.soup", identifier: "soup-1"): 2,
                ShortcutID(bundleId: "com.example.soup", identifier: "soup-2"): 1,
                ShortcutID(bundleId: "com.example.soup", identifier: "soup-3"): 2,
            ])
            #expect(after[0].shortcuts[ShortcutID(bundleId: "com.example.tea", identifier: "tea")]?.donationCount == 1)
            let again = try await rebuilder.verify()
            #expect(again.differences == [], "\(again.differences.prefix(3))")

            // Compacting again, through the head: version 53 is older than 46…52, so the only clean
            // cut past 45 is the head itself.
            let second = try await projections.compact(account: account, through: 53)
            #expect(second.outcome == .compacted && second.horizonVersion == 53)
            #expect(try await views() == after)
            let last = try await rebuilder.verify()
            #expect(last.differences == [], "\(last.differences.prefix(3))")
            // What is left: the groups' latest donations and each device's last event.
            #expect(try await events() <= 5 + 1 + 1)
        }
    }

    /// A rebuild's pass reads a compacted account's log after its horizon only (the events kept
    /// below it, which no fold reads, are left out), and every event of an account not compacted.
    @Test func aRebuildsPassReadsACompactedAccountAfterItsHorizonOnly() async throws {
        try await TestDatabase.withClient { client, _ in
            let compacted = UUID(), whole = UUID()
            var phone = DeviceScript(account: compacted), other = DeviceScript(account: whole)
            try await register([phone, other], client: client)
            let store = PostgresEventStore(client: client, logger: logger)
            // Versions 1…12 of each; "early" (1) is donated once. Below the horizon (8) stay its
            // donation and each soup's latest up to there (6, 7, 8), which the snapshot shows.
            for index in 0..<12 {
                let wall = 1000 + Int64(index) * 10
                _ = try await store.append([phone.donate(index == 0 ? "early" : "soup-\(index % 3)", at: wall).event],
                                           account: compacted, device: phone.deviceId)
                _ = try await store.append([other.donate("tea-\(index % 2)", at: wall).event], account: whole, device: other.deviceId)
            }
            let projections = ProjectionStore(client: client, logger: logger)
            let compaction = try await projections.compact(account: compacted, through: 8)
            #expect(compaction.outcome == .compacted && compaction.horizonVersion == 8 && compaction.eventsKept == 4, "\(compaction)")

            let horizons = try await projections.seedRebuildFromSnapshots()
            #expect(horizons == [compacted: 8])
            let read = try await client.withConnection { connection in
                var versions: [UUID: [Int64]] = [:]
                for try await entry in try await store.foldLogByAccount(after: horizons, on: connection) {
                    versions[entry.accountId, default: []].append(entry.event.version)
                }
                return versions
            }
            #expect(read[compacted] == Array(9...12), "the kept donations are not read")
            #expect(read[whole] == Array(1...12))
            let verified = try await ProjectionRebuilder(client: client, logger: logger).verify()
            #expect(verified.accountsCompared == 2 && verified.differences == [], "\(verified.differences.prefix(3))")
        }
    }

    /// An account compacted between a rebuild and its promotion, past the version its rebuilt rows
    /// include: the events between are gone from the log, so its promotion starts its rebuilt rows
    /// again from the new snapshot instead of folding on without them, and its views stay.
    @Test func anAccountCompactedWhileARebuildRunsKeepsItsViewsAtThePromotion() async throws {
        try await TestDatabase.withClient { client, _ in
            let account = UUID()
            var phone = DeviceScript(account: account)
            try await register([phone], client: client)
            let store = PostgresEventStore(client: client, logger: logger)
            let projections = ProjectionStore(client: client, logger: logger)
            // Versions 1…10 are rebuilt; 11…20, donations of new shortcuts, come after the rebuild.
            for index in 0..<10 {
                _ = try await store.append([phone.donate("soup-\(index % 3)", at: 1000 + Int64(index) * 10).event], account: account, device: phone.deviceId)
            }
            let rebuilder = ProjectionRebuilder(client: client, logger: logger)
            try await rebuilder.rebuild()
            for index in 10..<20 {
                _ = try await store.append([phone.donate("tea-\(index)", at: 1000 + Int64(index) * 10).event], account: account, device: phone.deviceId)
            }
            let before = try await projections.fullViews(account: account, devices: [phone.deviceId])
            let compaction = try await projections.compact(account: account, through: 20)
            #expect(compaction.outcome == .compacted && compaction.horizonVersion == 20, "\(compaction)")

            try await rebuilder.promote()
            #expect(try await projections.fullViews(account: account, devices: [phone.deviceId]) == before)
            let verified = try await ProjectionRebuilder(client: client, logger: logger).verify()
            #expect(verified.accountsCompared == 1 && verified.differences == [], "\(verified.differences.prefix(3))")
        }
    }

    /// A live row the fold of the snapshot and the rest does not give (here, made so by hand) is
    /// a defect: the compaction is refused whole and the log keeps every event. Every table the
    /// snapshot holds is compared (issue 65, item 4), with the events after the horizon in one
    /// chunk and one at a time.
    @Test(arguments: [
        (10_000, "UPDATE projection_donation_groups SET donations = donations + 1 WHERE identifier = 'soup-0'", "donationGroup"),
        (1, "UPDATE projection_donation_groups SET donations = donations + 1 WHERE identifier = 'soup-0'", "donationGroup"),
        (10_000, "UPDATE projection_shortcuts SET view = jsonb_set(view, '{title}', '\"Not the soup\"') WHERE identifier = 'soup-1'", "shortcut"),
        (1, "UPDATE projection_accounts SET shortcut_count = shortcut_count + 1", "account"),
        (10_000, "INSERT INTO projection_deletion_marks (account_id, bundle_id, scope, value, key) SELECT account_id, bundle_id, 'identifier', 'soup-9', latest_key FROM projection_donation_groups WHERE identifier = 'soup-0'", "deletionMark"),
    ])
    func aLiveRowTheFoldDoesNotGiveRefusesTheCompaction(chunk: Int, edit: String, kind: String) async throws {
        try await TestDatabase.withClient { client, _ in
            var phone = DeviceScript(account: UUID())
            try await register([phone], client: client)
            let store = PostgresEventStore(client: client, logger: logger)
            for index in 0..<6 {
                _ = try await store.append([phone.donate("soup-\(index % 2)", at: 1000 + Int64(index)).event], account: phone.account, device: phone.deviceId)
            }
            let edited = try await client.query(PostgresQuery(unsafeSQL: edit), logger: logger)
            _ = try await edited.collect()
            var projections = ProjectionStore(client: client, logger: logger)
            projections.compactionChunk = chunk
            do {
                _ = try await projections.compact(account: phone.account, through: 4)
                Issue.record("compacted over an edited \(kind) row")
            } catch let mismatch as CompactionMismatch {
                #expect(mismatch.first?.kind.rawValue == kind, "\(mismatch)")
            }
            let events = try await client.query("SELECT count(*) FROM events WHERE account_id = \(phone.account)", logger: logger)
                .decode(Int64.self).collectAll().first
            #expect(events == 6)
        }
    }

    /// Issue 65, item 10: an imported event keeps the time its file gives; one of long ago,
    /// appended after today's pushes, does not put the retention's cut among them: the cut is
    /// the last version up to which every event was recorded before the time asked.
    @Test func anOldImportedEventDoesNotMoveTheCutIntoTheRetention() async throws {
        try await TestDatabase.withClient { client, _ in
            var phone = DeviceScript(account: UUID())
            try await register([phone], client: client)
            let store = PostgresEventStore(client: client, logger: logger)
            for index in 0..<5 {
                _ = try await store.append([phone.donate("soup-\(index)", at: 1000 + Int64(index)).event], account: phone.account, device: phone.deviceId)
            }
            let tokenHash = try #require(try await client.query("SELECT token_hash FROM accounts WHERE account_id = \(phone.account)", logger: logger)
                .decode(ByteBuffer.self).collectAll().first).readableBytesView
            let longAgo = Date().addingTimeInterval(-100 * 86_400)
            let imported = try await OperatorStore(client: client, logger: logger).importAccount(
                AccountRecord(accountId: phone.account, createdAt: longAgo, tokenHash: Array(tokenHash)), devices: [],
                events: [ArchivedEvent(line: 1, deviceId: phone.deviceId, recordedAt: longAgo, event: phone.donate("tea", at: 2000).event)])
            #expect(imported.events == 1)
            let projections = ProjectionStore(client: client, logger: logger)
            #expect(try await projections.lastVersion(of: phone.account, recordedBefore: Date().addingTimeInterval(-3_600)) == 0,
                    "today's five events are in the retention, and so is what comes after them")
            #expect(try await projections.lastVersion(of: phone.account, recordedBefore: Date().addingTimeInterval(60)) == 6)
        }
    }

    /// Issue 65, item 6: a stored count no fold writes (here by hand, as an edited import could)
    /// is refused as corrupt when a push reads it, where adding the push's donation to it would
    /// have trapped the process: the push is kept unfolded and its account parked (DESIGN §6, a
    /// defect in the fold costs no push), and the process goes on.
    @Test func aStoredCountNoFoldWritesParksTheAccountNotTheProcess() async throws {
        try await TestDatabase.withClient { client, _ in
            var phone = DeviceScript(account: UUID())
            try await register([phone], client: client)
            // Each push reads the rows (none kept from the last one, which the hand edit would not change).
            var store = PostgresEventStore(client: client, logger: logger)
            store.readCache = nil
            _ = try await store.append([phone.donate("soup", at: 1000).event], account: phone.account, device: phone.deviceId)
            try await client.query("""
                UPDATE projection_donation_groups SET donations = 9223372036854775807 WHERE account_id = \(phone.account)
                """, logger: logger)
            let pushed = try await store.append([phone.donate("soup", at: 2000).event], account: phone.account, device: phone.deviceId)
            #expect(pushed.appended == 1 && !pushed.folded, "\(pushed)")
            let parked = try await client.query("SELECT error FROM projection_parked_accounts WHERE account_id = \(phone.account)",
                                                logger: logger).decode(String.self).collectAll()
            #expect(parked.count == 1, "\(parked)")
            let donations = try await client.query("SELECT donations FROM projection_donation_groups WHERE account_id = \(phone.account)",
                                                   logger: logger).decode(Int64.self).collectAll()
            #expect(donations == [Int64.max], "the row is left for an operator to see")
        }
    }
}

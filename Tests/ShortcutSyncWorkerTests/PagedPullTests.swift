import Foundation
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
@testable import ShortcutSyncStore
import ShortcutSyncTestSupport
import ShortcutSyncWorker
import Testing

private let logger = TestDatabase.shared.logger

/// Pulls in pages (DESIGN §5): read from the projections in `(version, key)` order, they give the
/// current view exactly whatever lands between pages, and each page is an index range scan.
@Suite struct PagedPullTests {
    /// Random pushes of three devices of one account (deletions that cover donations, phrases that
    /// collide, app reports that change a device's filter and so restart its pull from a reset)
    /// are folded between the pages of every device's pulls. Whatever the page size, no page holds
    /// more items than it, and the pages applied in order equal the domain's fold of everything
    /// pushed so far.
    ///
    /// A page is bounded by bytes too (the last two cases: a few items' worth, so that pages stop
    /// for want of room far more often than for want of count).
    @Test(arguments: [(1, 1, Int.max), (2, 2, Int.max), (3, 3, Int.max), (4, 5, Int.max), (5, 1_000, 600), (6, 1_000, 1)] as [(UInt64, Int, Int)])
    func pagesAppliedInOrderEqualTheFoldWhateverIsFoldedBetweenThem(seed: UInt64, pageSize: Int, pageBytes: Int) async throws {
        try await withThreeDevices(seed: seed, pageSize: pageSize, pageBytes: pageBytes) { client, store, scenario, log in
            var random = SeededGenerator(seed: seed &+ 1_000)
            let account = scenario.devices[0].account
            var held: [UUID: (view: DeviceView, cursor: PullCursor?)] = [:]
            var pagesSeen = 0, pushesBetweenPages = 0
            do {
                for _ in 0..<8 {
                    for _ in 0..<4 {
                        let (device, events) = scenario.push()
                        try await log.push(device, events)
                    }
                    for device in scenario.devices.map(\.deviceId) {
                        var (view, cursor) = held[device] ?? (DeviceView.empty, nil)
                        var pages = 0
                        while true {
                            let page = try await store.pull(account: account, device: device, cursor: cursor)
                            let items = page.changes.upsertedShortcuts.count + page.changes.removedShortcuts.count
                                + page.changes.upsertedVoiceShortcuts.count + page.changes.removedVoiceShortcuts.count
                            #expect(items <= pageSize)
                            if pageBytes == 1 { #expect(items <= 1, "a page over its bytes holds its first row only") }
                            view = page.reset ? DeviceView.empty.applying(page.changes) : view.applying(page.changes)
                            cursor = page.cursor
                            pages += 1
                            guard page.more else { break }
                            #expect(page.cursor.page != nil)
                            if Int.random(in: 0..<3, using: &random) == 0 {
                                let (pusher, events) = scenario.push(maxEvents: 3)
                                try await log.push(pusher, events)
                                pushesBetweenPages += 1
                            }
                            guard pages < 1_000 else {
                                Issue.record("the pages of device \(device) did not end")
                                break
                            }
                        }
                        pagesSeen += pages
                        #expect(cursor?.page == nil)
                        #expect(view == log.expectedView(account: account, device: device), "seed \(seed), page size \(pageSize)")
                        held[device] = (view, cursor)
                    }
                }
            }
            // The scenario did page, and pushes did land between pages.
            #expect(pagesSeen > 3 * 8)
            #expect(pushesBetweenPages > 0)
        }
    }

    /// A fresh database with one account of three registered devices (`Scenario`), an empty
    /// push log, and a projection store with the page's bounds.
    private func withThreeDevices(
        seed: UInt64, pageSize: Int, pageBytes: Int,
        _ body: (PostgresClient, ProjectionStore, inout Scenario, inout PushLog) async throws -> Void
    ) async throws {
        try await TestDatabase.withClient { client, _ in
            let store = ProjectionStore(client: client, logger: logger, pullPageSize: pageSize, pullPageBytes: pageBytes)
            var scenario = Scenario(seed: seed, accounts: 1, devicesPerAccount: 3)
            try await register(scenario.devices, client: client)
            var log = PushLog(client: client)
            try await body(client, store, &scenario, &log)
        }
    }

    /// The common pull in one statement (`PullStatement`) answers exactly what the pull in a
    /// transaction answers, from the same database: random pushes of three devices (app reports
    /// among them, which restart a device's pull from a reset), each device pulling between
    /// them. It answers most pulls of devices that hold a complete view or nothing (a reset: no
    /// cursor), and declines the others: a page's cursor, a cursor the device's apps made stale, a
    /// diff or a view larger than it reads.
    @Test(arguments: [(21, 2, Int.max), (22, 1_000, Int.max), (23, 1_000, 600), (24, 5, Int.max)] as [(UInt64, Int, Int)])
    func theOneStatementPullAnswersAsTheTransactionDoes(seed: UInt64, pageSize: Int, pageBytes: Int) async throws {
        try await withThreeDevices(seed: seed, pageSize: pageSize, pageBytes: pageBytes) { client, store, scenario, log in
            var random = SeededGenerator(seed: seed &+ 2_000)
            let account = scenario.devices[0].account
            var cursors: [UUID: PullCursor] = [:]
            var answered = 0, declined = 0, resetsAnswered = 0
            for _ in 0..<40 {
                // Now and then many pushes between two pulls: a diff larger than the statement reads.
                for _ in 0..<(Int.random(in: 0..<8, using: &random) == 0 ? 30 : Int.random(in: 1...3, using: &random)) {
                    let (device, events) = scenario.push()
                    try await log.push(device, events)
                }
                for device in scenario.devices.map(\.deviceId) {
                    // Each device pulls page after page until it holds the whole view.
                    for _ in 0..<1_000 {
                        let cursor = cursors[device]
                        let (one, whole) = try await client.withConnection { connection in
                            (try await store.pullInOneStatement(account: account, device: device, cursor: cursor, on: connection),
                             try await store.pullInTransaction(account: account, device: device, cursor: cursor, on: connection))
                        }
                        if let one {
                            answered += 1
                            if one.reset { resetsAnswered += 1 }
                            #expect(one.cursor == whole.cursor, "seed \(seed)")
                            #expect(one.reset == whole.reset && one.more == whole.more)
                            #expect(one.changes == whole.changes, "seed \(seed), page size \(pageSize)")
                            #expect(one.maxHLC == whole.maxHLC && one.lastAcceptedSeq == whole.lastAcceptedSeq)
                        } else {
                            declined += 1
                        }
                        cursors[device] = whole.cursor
                        if !whole.more { break }
                    }
                }
            }
            #expect(answered > 20, "the one statement answered \(answered) pulls")
            #expect(declined > 3, "and declined \(declined)")
            #expect(resetsAnswered >= scenario.devices.count, "it answered \(resetsAnswered) resets, each device's first pull among them")
        }
    }

    /// A page is a range scan of the `(account_id, version, key)` index that stops after its
    /// rows: no sort of what the account changed, whether it starts after a version or after a key.
    @Test func aPageIsAnIndexRangeScanWithoutASort() async throws {
        try await TestDatabase.withClient { client, _ in
            let accounts = (0..<4).map { _ in UUID() }
            for account in accounts {
                try await client.query("""
                    INSERT INTO projection_shortcuts (account_id, bundle_id, identifier, view, version)
                    SELECT \(account), 'com.example.app' || (n % 7), 'item-' || n, '{}'::jsonb, n / 10 FROM generate_series(1, 5000) AS n
                    """, logger: logger)
                try await client.query("""
                    INSERT INTO projection_voice_shortcuts (account_id, voice_shortcut_id, view, version, deleted, target_available)
                    SELECT \(account), gen_random_uuid(), '{}'::jsonb, n / 10, false, true FROM generate_series(1, 5000) AS n
                    """, logger: logger)
            }
            try await client.query("ANALYZE projection_shortcuts", logger: logger)
            try await client.query("ANALYZE projection_voice_shortcuts", logger: logger)

            let account = accounts[1], limit = ProjectionStore.defaultPullPageSize + 1
            let queries = [
                ("shortcuts", "projection_shortcuts_changes",
                 ProjectionStore.shortcutRowsQuery(account: account, after: PullPosition(version: -1), removalsAfter: 400, limit: limit)),
                ("shortcuts after a key", "projection_shortcuts_changes",
                 ProjectionStore.shortcutRowsQuery(account: account, after: PullPosition(version: 120, key: ShortcutID(bundleId: "com.example.app3", identifier: "item-1203")),
                                                   removalsAfter: 400, limit: limit)),
                ("voice shortcuts", "projection_voice_shortcuts_changes",
                 ProjectionStore.voiceShortcutRowsQuery(account: account, after: PullPosition(version: 250), removalsAfter: 250, limit: limit)),
                ("voice shortcuts after a key", "projection_voice_shortcuts_changes",
                 ProjectionStore.voiceShortcutRowsQuery(account: account, after: PullPosition(version: 250, key: UUID()), removalsAfter: 250, limit: limit)),
            ]
            for (name, index, query) in queries {
                let plan = try await client.query(PostgresQuery(unsafeSQL: "EXPLAIN " + query.sql, binds: query.binds), logger: logger)
                    .decode(String.self).collectAll().joined(separator: "\n")
                #expect(plan.contains("Index Scan using \(index)"), "\(name):\n\(plan)")
                #expect(!plan.contains("Sort"), "\(name):\n\(plan)")
            }

            // And the rows come in that order, as many as asked.
            let rows = try await client.query(
                ProjectionStore.shortcutRowsQuery(account: account, after: PullPosition(version: 120, key: ShortcutID(bundleId: "com.example.app3", identifier: "item-1203")),
                                                  removalsAfter: 400, limit: 50), logger: logger)
                .decode((Int64, String, String, String?).self).collectAll()
            #expect(rows.count == 50)
            #expect(rows.allSatisfy { ($0.0, $0.1, $0.2) > (120, "com.example.app3", "item-1203") })
            #expect(zip(rows, rows.dropFirst()).allSatisfy { $0.0 < $1.0 || ($0.0 == $1.0 && ($0.1, $0.2) < ($1.1, $1.2)) })
        }
    }
}

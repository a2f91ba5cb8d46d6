import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
@testable import ShortcutSyncStore
import ShortcutSyncTestSupport
import ShortcutSyncWorker
import Testing

private let logger = TestDatabase.shared.logger

/// Migration 0009 upgrades a database of the global-order worker in place (DESIGN §6): the events
/// keep their account versions, every account gets its head, and every view stays what it was.
@Suite struct UpgradeTests {
    /// The fixture: a database at 0008 with data that the previous service pushed and folded.
    static let fixture = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "Fixtures/upgrade-from-0008.sql")

    /// Items of the account's projections as the rows hold them, whatever the schema: every
    /// shortcut and voice shortcut view that is present (not a tombstone), as text.
    static func projectedItems(_ client: PostgresClient) async throws -> Set<String> {
        let rows = try await client.query("""
            SELECT account_id::text || ' shortcut ' || view::text FROM projection_shortcuts WHERE view IS NOT NULL
            UNION ALL
            SELECT account_id::text || ' voice ' || view::text FROM projection_voice_shortcuts WHERE view IS NOT NULL
            """, logger: logger)
        return Set(try await rows.decode(String.self).collectAll())
    }

    /// A database at 0008 holding the fixture; `unfolded` events of the newest are then marked as
    /// not yet folded by the old worker (its checkpoint moved back before them).
    static func databaseAt0008(unfolded: Int = 0, _ body: (PostgresClient) async throws -> Void) async throws {
        let url = try await TestDatabase.shared.emptyDatabase()
        let client = PostgresClient(configuration: try url.clientConfiguration(maximumConnections: 4), backgroundLogger: logger)
        try await client.withRunning {
            try await Migrator(client: client, logger: logger, migrations: try Migration.bundled().filter { $0.version <= 8 }).migrate()
            try await client.withConnection { connection in
                for statement in SQLScript.statements(in: try String(contentsOf: fixture, encoding: .utf8)) {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                if unfolded > 0 {
                    try await connection.query(PostgresQuery(unsafeSQL: """
                        UPDATE projection_checkpoint c SET tx_id = e.tx_id, position = e.position
                        FROM (SELECT tx_id, position FROM events ORDER BY tx_id DESC, position DESC OFFSET \(unfolded) LIMIT 1) e
                        WHERE c.name = 'live'
                        """), logger: logger)
                }
            }
            try await body(client)
        }
    }

    /// Every device's view, through the pull, against the domain's fold of its account's events.
    static func expectEveryViewIsTheWholeSetsFold(_ client: PostgresClient) async throws -> Int {
        let projections = ProjectionStore(client: client, logger: logger)
        let log = PostgresEventStore(client: client, logger: logger)
        let devices = try await client.query("SELECT account_id, device_id FROM devices", logger: logger).decode((UUID, UUID).self).collectAll()
        for (account, device) in devices {
            let events = try await log.readStream(account: account, after: 0, limit: 100_000)
            let expected = AccountState(folding: events.map(\.accepted)).view(forDevice: device)
            #expect(try await projections.fullView(account: account, device: device) == expected, "device \(device)")
        }
        return devices.count
    }

    /// Every account's row holds as many shortcuts as its view (`shortcut_count`, 0020); returns
    /// how many shortcuts the accounts hold in all.
    static func expectEachAccountsRowCountsItsShortcuts(_ client: PostgresClient) async throws -> Int {
        let rows = try await client.query("""
            SELECT a.account_id, a.shortcut_count,
                   (SELECT count(*) FROM projection_shortcuts s WHERE s.account_id = a.account_id AND s.view IS NOT NULL)
            FROM projection_accounts a
            """, logger: logger)
        var total = 0
        for try await (account, kept, counted) in rows.decode((UUID, Int32, Int64).self) {
            #expect(Int(kept) == Int(counted), "account \(account)")
            total += Int(counted)
        }
        return total
    }

    @Test func anUpgradedDatabaseKeepsEveryViewAndFoldsOnFromIt() async throws {
        try await Self.databaseAt0008 { client in
            let before = try await Self.projectedItems(client)
            #expect(before.count > 50)
            try await Migrator(client: client, logger: logger).migrate()

            // The old worker had folded everything: every account is current at once, its rows as they were.
            #expect(try await Self.projectedItems(client) == before)
            let heads = try await client.query("SELECT count(*), count(*) FILTER (WHERE folded_version = version AND version > 0) FROM account_heads",
                                               logger: logger).decode((Int64, Int64).self).collectAll()
            #expect(heads.first?.0 == 6 && heads.first?.1 == 6)
            #expect(try await ProjectionStore(client: client, logger: logger).status().accountsBehind == 0)
            #expect(try await Self.expectEveryViewIsTheWholeSetsFold(client) == 18)
            // 0020 counted each account's shortcuts onto its row.
            #expect(try await Self.expectEachAccountsRowCountsItsShortcuts(client) > 0)

            // Pushes fold on from the migrated rows (their latest donations are found by version now).
            let result = try await Self.pushFromTheFirstDevice(client) { script, wall in
                [script.donate("item-1", bundle: "com.example.soup", at: wall), script.delete(.groupIdentifier("g1"), bundle: "com.example.bank", at: wall - 3_000_000),
                 script.donate("item-2", bundle: "com.example.maps", group: "g0", at: wall + 1)]
            }
            #expect(result.folded && result.appended == 3)
            _ = try await Self.expectEveryViewIsTheWholeSetsFold(client)
            _ = try await Self.expectEachAccountsRowCountsItsShortcuts(client)
        }
    }

    @Test func accountsTheOldWorkerHadNotFoldedAreFoldedAgainByTheMaintenanceTasks() async throws {
        try await Self.databaseAt0008(unfolded: 40) { client in
            try await Migrator(client: client, logger: logger).migrate()
            let behind = try await ProjectionStore(client: client, logger: logger).status()
            #expect(behind.accountsBehind > 0)
            let worker = SyncWorker(queue: ProjectionStore(client: client, logger: logger), logger: logger, batchSize: 50)
            var folds = 0
            while try await worker.foldNext() { folds += 1 }
            #expect(folds >= Int(behind.accountsBehind))
            #expect(try await ProjectionStore(client: client, logger: logger).status().accountsBehind == 0)
            #expect(try await Self.expectEveryViewIsTheWholeSetsFold(client) == 18)
        }
    }

    /// Pushes the events `make` writes (given the device's script and the time now) from the first
    /// device of the fixture, after the seqs it pushed before.
    static func pushFromTheFirstDevice(
        _ client: PostgresClient, _ make: (inout DeviceScript, Int64) -> [AcceptedEvent]
    ) async throws -> AppendResult {
        let (account, device) = try await client.query(
            "SELECT account_id, device_id FROM devices ORDER BY device_id LIMIT 1", logger: logger).decode((UUID, UUID).self).collectAll()[0]
        let log = PostgresEventStore(client: client, logger: logger)
        var script = DeviceScript(device, account: account, detail: .full)
        script.seq = try await log.lastAcceptedSeq(account: account, device: device)
        let events = make(&script, Int64(Date().timeIntervalSince1970 * 1000))
        return try await log.append(events.map(\.event), account: account, device: device)
    }

    /// The suggestion sums of each donation group, by account and group, as stored (nil: none).
    static func storedSums(_ client: PostgresClient) async throws -> [String: String] {
        let rows = try await client.query("""
            SELECT concat_ws('/', account_id, bundle_id, identifier, group_id), encode(habits, 'hex') FROM projection_donation_groups
            """, logger: logger)
        return Dictionary(uniqueKeysWithValues: try await rows.decode((String, String?).self).collectAll().map { ($0.0, $0.1 ?? "none") })
    }

    /// Migration 0011 added what the fold derives (suggestion sums) to rows folded before it: an
    /// upgrade leaves a database that verifies and suggests from the whole history, with no
    /// operator's step: the maintenance tasks refold each account while pushes go on, and
    /// `admin projections status` counts what is left.
    @Test func anUpgradeRefoldsEveryAccountInTheBackgroundUntilItVerifies() async throws {
        try await Self.databaseAt0008 { client in
            try await Migrator(client: client, logger: logger).migrate()
            let operators = OperatorStore(client: client, logger: logger)
            #expect(try await operators.projectionStatus().accountsToRefold == 6)
            let before = try await Self.storedSums(client)
            #expect(before.values.allSatisfy { $0 == "none" }, "rows folded before 0011 have no sums")
            let early = try await ProjectionRebuilder(client: client, logger: logger).verify()
            #expect(early.accountsBehind == 6 && early.differences == [], "before the refold, verify does not compare them")

            // A push before its account is refolded folds on as always; the refold includes it.
            let pushed = try await Self.pushFromTheFirstDevice(client) { script, wall in [script.donate("item-1", bundle: "com.example.soup", at: wall)] }
            #expect(pushed.folded && pushed.appended == 1)

            let worker = SyncWorker(queue: ProjectionStore(client: client, logger: logger), logger: logger, batchSize: 50)
            var refolds = 0
            while try await worker.foldNext() { refolds += 1 }
            #expect(refolds == 6, "each account once")
            #expect(try await operators.projectionStatus().accountsToRefold == 0)
            let after = try await Self.storedSums(client)
            #expect(after.values.contains { $0 != "none" }, "the whole history teaches now")
            let verification = try await ProjectionRebuilder(client: client, logger: logger).verify()
            #expect(verification.differences == [], "\(verification.differences.prefix(3))")
            #expect(verification.accountsBehind == 0)
            #expect(try await Self.expectEveryViewIsTheWholeSetsFold(client) == 18)
        }
    }
}

import Foundation
import PostgresNIO
import ShortcutSyncAdmin
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import ShortcutSyncWorker
import Testing

private let logger = TestDatabase.shared.logger

/// Rebuild, verify, export/import and erasure against a real PostgreSQL.
@Suite struct AdminMaintenanceTests {
    @Test func verifyFindsAProjectionRowChangedByHand() async throws {
        try await TestDatabase.withClient { client, _ in
            var phone = DeviceScript()
            try await register([phone], client: client)
            var log = PushLog(client: client)
            try await log.push(phone, [phone.donate("tomato", at: 100), phone.donate("leek", at: 110)])
            let admin = Operator(client: client, logger: logger)
            let progress = Counter()

            let clean = try await admin.verify { processed, _ in await progress.set(processed) }
            #expect(clean.consistent && clean.differences.isEmpty && clean.accountsCompared == 1)
            #expect(await progress.value == 2)
            #expect(clean.text.contains("1 account equal"))

            try await client.query("""
                UPDATE projection_shortcuts SET view = jsonb_set(view, '{title}', '"Changed by hand"')
                WHERE identifier = 'leek'
                """, logger: logger)
            let changed = try await admin.verify { _, _ in }
            #expect(!changed.consistent)
            #expect(changed.differences.map(\.kind) == ["shortcut"])
            #expect(changed.differences.first?.key == "com.example.soup/leek")
            #expect(changed.differences.first?.live?.contains("Changed by hand") == true)
            #expect(changed.text.contains("1 difference"))
        }
    }

    /// `projections rebuild` while devices keep pushing and a worker keeps folding an import:
    /// the swapped-in projections are the domain's fold of everything pushed and imported.
    @Test func aRebuildWhilePushesGoOnEndsEqualToTheFold() async throws {
        try await TestDatabase.withClient { client, _ in
            var scenario = Scenario(seed: 5, accounts: 3, devicesPerAccount: 2)
            var log = try await PushLog.registering(&scenario, pushes: 60, client: client)
            var imported = DeviceScript(detail: .full)
            let backlog = (0..<30).map { imported.donate("soup-\($0 % 4)", at: 100 + Int64($0)) }
            try await writeBacklog(backlog, account: imported.account, client: client)
            let store = ProjectionStore(client: client, logger: logger)
            let worker = SyncWorker(queue: ProjectionStore(client: client, logger: logger), logger: logger, batchSize: 7, tasks: 2)
            let admin = Operator(client: client, logger: logger)
            try await whileRunning(worker) {
                let rebuilt = try await withThrowingTaskGroup(of: RebuildReport?.self) { group in
                    group.addTask { try await admin.rebuild { _, _ in } }
                    for _ in 0..<40 {
                        let (device, events) = scenario.push()
                        try await log.push(device, events)
                    }
                    return try await group.next()!
                }
                #expect((rebuilt?.eventsReplayed ?? 0) >= 90)
                try await store.waitUntilCaughtUp()
            }
            for device in scenario.devices {
                #expect(try await store.fullView(account: device.account, device: device.deviceId)
                        == log.expectedView(account: device.account, device: device.deviceId))
            }
            #expect(try await store.fullView(account: imported.account, device: imported.deviceId)
                    == AccountState(folding: backlog).view(forDevice: imported.deviceId))
            let verified = try await admin.verify { _, _ in }
            #expect(verified.consistent && verified.accountsCompared == 4, "\(verified)")
        }
    }

    /// An export imported into an empty database gives every device the same view; importing
    /// it again adds nothing; exporting the copy gives the same file (positions aside).
    @Test func anExportImportedElsewhereGivesTheSameViewsAndASecondImportAddsNothing() async throws {
        try await TestDatabase.withClient { source, _ in
            try await TestDatabase.withClient { target, _ in
                var scenario = Scenario(seed: 21, accounts: 1, devicesPerAccount: 3)
                let log = try await PushLog.registering(&scenario, pushes: 30, client: source)
                let account = scenario.devices[0].account
                // A device signed out: its sign-out is an event of the archive like any other.
                #expect(try await PostgresEventStore(client: source, logger: logger).signOut(
                    device: scenario.devices[2].deviceId, account: account, wallMillis: Int64(Date().timeIntervalSince1970 * 1000)))
                let events = (log.accepted[account]?.count ?? 0) + 1
                let lines = try await Operator(client: source, logger: logger).export(account: account)
                // After the events, what each shortcut taught (issue 34): an import learns it again.
                let learned = lines.filter { $0.contains(#""kind":"learned""#) }
                #expect(!learned.isEmpty)
                // And before those, the pauses and forgets (issue 34): the signed-out device among them.
                let learning = lines.filter { $0.contains(#""kind":"learning""#) }
                #expect(learning.count == 1 && learning.first?.contains(scenario.devices[2].deviceId.uuidString) == true)
                #expect(lines.count == 1 + 3 + events + 1 + learned.count)
                #expect(lines.dropLast(learned.count + 1).last?.contains(#""type":"deviceSignedOut""#) == true)
                #expect(lines.dropLast(learned.count).last == learning.first, "the learning line after the events")
                #expect(lines.suffix(learned.count) == learned[...], "learned lines come last")

                let importer = Operator(client: target, logger: logger)
                let first = try await importer.importAccount(try AccountArchive.read(lines.map { Substring($0) }))
                #expect(first.accountsAdded == 1 && first.devicesAdded == 3 && first.eventsAdded == events)
                let second = try await importer.importAccount(try AccountArchive.read(lines.map { Substring($0) }))
                #expect(second.accountsAdded == 0 && second.devicesAdded == 0 && second.eventsAdded == 0)
                #expect(second.eventsAlreadyStored == first.eventsAdded)

                // The import is folded by the maintenance tasks; until then the account is behind.
                let targetStore = ProjectionStore(client: target, logger: logger)
                #expect(try await targetStore.head(account: account) == (Int64(first.eventsAdded), 0))
                #expect(try await targetStore.foldAll() >= 1)
                #expect(try await targetStore.head(account: account) == (Int64(first.eventsAdded), Int64(first.eventsAdded)))
                for device in scenario.devices {
                    let there = try await ProjectionStore(client: target, logger: logger).fullView(account: account, device: device.deviceId)
                    #expect(there == log.expectedView(account: account, device: device.deviceId))
                }
                let again = try await importer.export(account: account)
                // The same file, what was learned included: the copy learned the same from the same events.
                #expect(again.map(withoutPosition) == lines.map(withoutPosition))
                // Events are exported in version order, with their versions.
                #expect(lines.dropFirst(4).dropLast(learned.count + 1).enumerated().allSatisfy { $0.element.hasSuffix("\"version\":\($0.offset + 1)}") })
            }
        }
    }

    @Test func aBrokenLineIsNamedAndNothingOfTheFileIsStored() async throws {
        try await TestDatabase.withClient { client, _ in
            var phone = DeviceScript()
            try await register([phone], client: client)
            var log = PushLog(client: client)
            try await log.push(phone, [phone.donate("tomato", at: 100), phone.donate("leek", at: 110), phone.delete(.all, at: 120)])
            var lines = try await Operator(client: client, logger: logger).export(account: phone.account)

            // In the file: an event whose title is empty, on line 4.
            lines[3] = lines[3].replacingOccurrences(of: "\"title\":\"Order leek\"", with: "\"title\":\"\"")
            #expect(throws: AccountArchive.LineError.self) { try AccountArchive.read(lines.map { Substring($0) }) }
            do {
                _ = try AccountArchive.read(lines.map { Substring($0) })
            } catch let error as AccountArchive.LineError {
                #expect(error.line == 4 && error.description.contains("/event/title"))
            }
            #expect(throws: AccountArchive.LineError.self) { try AccountArchive.read(["{\"kind\":\"event\"}", "not json"]) }

            // Against the database: files that disagree with what it holds store nothing.
            try await TestDatabase.withClient { target, _ in
                let admin = Operator(client: target, logger: logger)
                let clean = try await Operator(client: client, logger: logger).export(account: phone.account)
                // All but the last event (the learning line follows the events; everything was deleted, so no learned line).
                #expect(clean.last?.contains(#""kind":"learning""#) == true)
                var firstTwo = clean
                firstTwo.remove(at: clean.count - 2)
                #expect(try await admin.importAccount(try AccountArchive.read(firstTwo.map { Substring($0) })).eventsAdded == 2)

                // A new event that takes a seq the device already used for another one.
                var reused = try AccountArchive.read(clean.map { Substring($0) })
                reused.events[2].event.seq = 2
                reused.events[2].event.id = UUID()
                await #expect(throws: ImportConflict.self) { try await admin.importAccount(reused) }
                // The account under another token.
                var otherToken = try AccountArchive.read(clean.map { Substring($0) })
                otherToken.account.tokenHash = Array(repeating: 7, count: 32)
                await #expect(throws: ImportConflict.self) { try await admin.importAccount(otherToken) }
                #expect(try await eventCount(target) == 2)

                #expect(try await admin.importAccount(try AccountArchive.read(clean.map { Substring($0) })).eventsAdded == 1)
            }
        }
    }

    @Test func erasureLeavesNoRowOfTheAccountAnywhereAndVerifyPasses() async throws {
        try await TestDatabase.withClient { client, _ in
            var scenario = Scenario(seed: 3, accounts: 2, devicesPerAccount: 2)
            var log = try await PushLog.registering(&scenario, pushes: 40, client: client)
            // The erased account holds the log's last events (a replay once waited for them forever).
            var last = scenario.devices[0]
            try await log.push(last, [last.donate("tomato", at: 1_763_712_999_999)])
            let erased = last.account
            // The other account surely learned something: its learning resumed (the scenario may
            // have paused it), then a donation.
            var other = scenario.devices.first { $0.account != erased }!
            try await log.push(other, [other.pause(.account, false, at: 1_763_712_999_990), other.pause(.device(other.deviceId), false, at: 1_763_712_999_991),
                                       other.donate("leek", at: 1_763_712_999_992)])
            let kept = other.account
            let admin = Operator(client: client, logger: logger)
            _ = try await admin.verify { _, _ in }  // fills the rebuild tables too
            // Its device has a push token (migration 0012): the erasure takes it too.
            #expect(try await PushTokenStore(client: client, logger: logger).register(
                PushTokenRegistration(token: String(repeating: "ab", count: 32), topic: "com.example.soup", environment: "production"),
                device: last.deviceId, account: erased))
            #expect(try await rowsMentioning(erased, client) > 0)
            // What the suggestions learned of it (issue 34): the erasure takes it with the rest.
            let projections = ProjectionStore(client: client, logger: logger)
            #expect(try await !projections.allHabits(account: erased).isEmpty)

            let report = try await admin.erase(account: erased)
            #expect(try await projections.allHabits(account: erased).isEmpty)
            #expect(try await !projections.allHabits(account: kept).isEmpty)
            #expect(report.events == Int64(log.accepted[erased]?.count ?? -1) && report.devices == 2 && report.accounts == 1)
            #expect(try await rowsMentioning(erased, client) == 0)
            #expect(try await rowsMentioning(kept, client) > 0)
            #expect(try await admin.verify { _, _ in }.consistent)
            await #expect(throws: AdminUsageError.self) { try await admin.erase(account: erased) }
        }
    }

    /// A rebuild that read an account before it was erased writes its rows into the rebuild
    /// tables; the promotion drops them, and brings nothing of the account back to the live side.
    @Test func aRebuildThatReadAnAccountBeforeItsErasureDoesNotBringItBack() async throws {
        try await TestDatabase.withClient { client, _ in
            var phone = DeviceScript()
            var other = DeviceScript()
            try await register([phone, other], client: client)
            var log = PushLog(client: client)
            try await log.push(phone, [phone.donate("tomato", at: 100)])
            try await log.push(other, [other.donate("leek", at: 100)])
            let store = ProjectionStore(client: client, logger: logger)
            try await store.rebuilder.rebuild()

            _ = try await Operator(client: client, logger: logger).erase(account: phone.account)
            // As if the rebuild had written the account's rows just after the erasure removed them.
            try await client.query("""
                INSERT INTO rebuild.projection_accounts (account_id, version, max_hlc_wall, max_hlc_counter)
                VALUES (\(phone.account), 1, 100, 0)
                """, logger: logger)
            try await store.rebuilder.promote()
            #expect(try await rowsMentioning(phone.account, client) == 0)
            #expect(try await store.fullView(account: other.account, device: other.deviceId).shortcuts.count == 1)
        }
    }
}

/// Rows that name the account in any table of the database (every schema, every column called `account_id`).
private func rowsMentioning(_ account: UUID, _ client: PostgresClient) async throws -> Int64 {
    let tables = try await client.query("""
        SELECT table_schema || '.' || table_name FROM information_schema.columns
        WHERE column_name = 'account_id' AND table_schema NOT IN ('pg_catalog', 'information_schema')
        """, logger: logger).decode(String.self).collectAll()
    #expect(tables.count >= 14)
    var total: Int64 = 0
    for table in tables {
        total += try await client.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table) WHERE account_id = '\(account.uuidString)'"),
                                        logger: logger).decode(Int64.self).collectAll().first ?? 0
    }
    return total
}

/// An export line without the exporting database's log position.
func withoutPosition(_ line: String) -> String {
    line.replacingOccurrences(of: #""position":\d+,"#, with: "", options: .regularExpression)
}

actor Counter {
    var value = 0
    func set(_ value: Int) { self.value = value }
}

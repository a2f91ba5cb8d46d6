import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
@testable import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

/// Issue 66, item 1: a small push on Citus is written by fast-path router statements, each run on
/// the local shard of the account's worker, planned with its values at each run
/// (`DistributedFunctions.settings`: Citus 13.2 kept a plan for every run of a generic one,
/// `aWorkersSessionKeepsItsSizeThroughPushesAndPulls`). The push runs on the
/// worker that holds the account's shards (as a routed server's does), with Citus's debug
/// messages on for that one session (`log_min_messages = debug2`, `citus.log_local_commands`),
/// read back from the worker's log by the session's pid (PostgresNIO drops notices, so
/// `client_min_messages` would show nothing).
@Suite(.serialized, .enabled(if: CitusCluster.suitesRun, CitusCluster.notInstalled), .citusCluster)
struct CitusFastPathTests {
    /// What Citus says when a statement is not a fast-path router statement run where it is
    /// (and a router plan not made for a fast-path statement: `messages`).
    static let notFastPath = ["generating subplan", "via coordinator", "Collecting INSERT", "pushdown", "multi-shard"]

    /// The worker's log (`EmbeddedPostgres` starts each node with `pg_ctl -l <home>/postgres.log`,
    /// its data directory `<home>/cluster`).
    static let logFile = "regexp_replace(current_setting('data_directory'), '/[^/]+$', '') || '/postgres.log'"

    /// The batch's bound, written in the function's text, is the arms' (`FastPathRows.maximum`).
    @Test func theBatchsBoundIsTheArms() {
        #expect(PushWriteFunction.definition.sql.contains("<= \(FastPathRows.maximum) THEN -- FastPathRows.maximum"))
    }

    @Test func aSmallPushIsWrittenByFastPathStatements() async throws {
        try await Self.onTheAccountsWorker { account, device, worker in
            let store = PostgresEventStore(client: worker, logger: TestDatabase.shared.logger)
            // Six one-event pushes first (the account's first rows), then Citus's messages on,
            // then pushes of 1, 3 and the most rows the function writes as fast-path statements.
            let counts = [1, 1, 1, 1, 1, 1, 1, 3, FastPathRows.maximum]
            var seq: Int64 = 0
            var debug: (logStart: Int64, pid: Int32) = (0, 0)
            for (index, count) in counts.enumerated() {
                if index == 6 { debug = try await Self.debugOn(worker) }
                let events = (0..<count).map { offset in
                    Event(seq: seq + Int64(offset) + 1, hlc: HLCTimestamp(wallMillis: 1_764_000_000_000 + seq + Int64(offset), counter: 0),
                          body: .donation(Donation(bundleId: "com.example.soup", identifier: "item-\(offset % 3)", kind: .intent,
                                                   intentType: "OrderIntent", title: "Order \(offset % 3)")))
                }
                seq += Int64(count)
                let result = try await store.append(events, account: account, device: device)
                #expect(result.appended == count)
            }
            let lines = try await Self.debugOff(worker, since: debug)
            // The write's messages: from the function's call to the next statement the store sends
            // (the push's read, `fold_read`, when its rows are not kept: aPushsReadIsMadeOfFastPathStatements).
            var write: [String] = [], inWrite = false
            for line in lines {
                if line.range(of: "DEBUG:  parse ") != nil || line.range(of: "DEBUG:  bind <unnamed> to FoldRead") != nil {
                    inWrite = line.range(of: "SELECT \(PushWriteFunction.name)(") != nil
                }
                if inWrite { write.append(line) }
            }
            #expect(write.count > 20, "the write's messages were not found: \(lines.prefix(5))")
            let local = write.filter { $0.range(of: "executing the command locally") != nil }
            // The head's move, the events, the account's row, the groups and the shortcuts, each run locally.
            for table in ["account_heads", "events", "projection_accounts", "projection_donation_groups", "projection_shortcuts"] {
                #expect(local.contains { $0.contains("public.\(table)_") }, "no statement on a local shard of \(table): \(lines.prefix(5))")
            }
            for (phrase, found) in Self.messages(write, saying: Self.notFastPath) {
                #expect(found.isEmpty, "\(found.count) messages say \"\(phrase)\", the first: \(found.first ?? "")")
            }
        }
    }

    /// The read of a push whose rows no server kept (`fold_read`): of a push of donations, the
    /// account's row, the groups, the marks and forgets, the bound voice shortcuts, the device's
    /// last seq and the head; of a push of deletions by group and by app, a voice shortcut's
    /// phrase and an app report, the groups reached through them, the voice shortcuts sharing
    /// phrases and the devices too; each a fast-path statement run on the local shard. The rows
    /// it gives are those the one statement gives on the same tables (`DonationReadStatement`,
    /// `FoldReadStatement`), for either kind of push, with rows that only its supersets reach.
    @Test func aPushsReadIsMadeOfFastPathStatements() async throws {
        try await Self.onTheAccountsWorker { account, device, worker in
            var store = PostgresEventStore(client: worker, logger: TestDatabase.shared.logger)
            store.readCache = nil  // every push reads its rows
            var seq: Int64 = 0
            func push(_ bodies: [EventBody]) async throws {
                let events = bodies.map { body in
                    seq += 1
                    return Event(seq: seq, hlc: HLCTimestamp(wallMillis: 1_764_000_000_000 + seq, counter: 0), body: body)
                }
                #expect(try await store.append(events, account: account, device: device).appended == events.count)
            }
            func donation(_ app: String, _ identifier: String, group: String = "g0") -> EventBody {
                .donation(Donation(bundleId: "com.example.\(app)", identifier: identifier, kind: .intent, intentType: "OrderIntent",
                                   title: "Order \(identifier)", groupIdentifier: group))
            }
            func voice(_ id: UUID, _ phrase: String, _ app: String, _ identifier: String) -> EventBody {
                .voiceShortcutAdded(VoiceShortcutAdded(voiceShortcutId: id, phrase: phrase, bundleId: "com.example.\(app)",
                                                       identifier: identifier, title: identifier))
            }
            func shortcut(_ app: String, _ identifier: String) -> ShortcutID { ShortcutID(bundleId: "com.example.\(app)", identifier: identifier) }
            // Bread has donations in two groups; soup/latte and soup/cake are in no push's needs (the
            // first is in a superset of pairs).
            let everyDonation = [donation("soup", "soup"), donation("soup", "bread"), donation("soup", "bread", group: "g1"),
                                 donation("soup", "latte"), donation("soup", "cake"), donation("coffee", "latte"), donation("juice", "orange")]
            let soupTime = UUID(), teaTime = UUID(), alsoTea = UUID(), coffeeNow = UUID(), juice = UUID(), other = UUID()
            try await push([.deletion(Deletion(bundleId: "com.example.soup", selector: .identifiers(["soup"])))])
            try await push(everyDonation + [voice(soupTime, "Soup time", "soup", "soup"), voice(teaTime, "Tea time", "tea", "green"),
                                            voice(alsoTea, "Tea time", "coffee", "black"), voice(coffeeNow, "Coffee now", "coffee", "mocha"),
                                            voice(juice, "Juice", "juice", "orange"), voice(other, "Other", "other", "x"),
                                            .appsReported(AppsReported(installed: ["com.example.soup"]))])
            let donations = [donation("soup", "soup"), donation("soup", "bread")]
            let general: [EventBody] = [.deletion(Deletion(bundleId: "com.example.soup", selector: .groupIdentifier("g1"))),
                                        .deletion(Deletion(bundleId: "com.example.juice", selector: .all)),
                                        .voiceShortcutUpdated(VoiceShortcutUpdated(voiceShortcutId: teaTime, phrase: "Tea time")),
                                        .appsReported(AppsReported(installed: ["com.example.soup", "com.example.tea"]))]
            for _ in 0..<6 { try await push(donations); try await push(general) }  // the rows' first writes, before the messages
            for (kind, bodies, tables) in [
                ("donations", donations,
                 ["projection_accounts", "projection_donation_groups", "projection_deletion_marks", "projection_voice_shortcuts", "events",
                  "account_heads"]),
                ("deletions, a phrase and a report", general,
                 ["projection_accounts", "projection_donation_groups", "projection_deletion_marks", "projection_voice_shortcuts",
                  "projection_devices", "events", "account_heads"]),
            ] {
                let debug = try await Self.debugOn(worker)
                try await push(bodies)
                let lines = try await Self.debugOff(worker, since: debug)
                var read: [String] = [], inRead = false
                for line in lines {
                    if line.range(of: "DEBUG:  parse ") != nil || line.range(of: "DEBUG:  bind ") != nil {
                        if line.range(of: "\(FoldReadFunction.name)(") != nil { inRead = true } else if line.range(of: "DEBUG:  parse ") != nil { inRead = false }
                    }
                    if inRead { read.append(line) }
                }
                #expect(read.count > 5, "the read of a push of \(kind): its messages were not found: \(lines.prefix(5))")
                let local = read.filter { $0.range(of: "executing the command locally") != nil }
                for table in tables {
                    #expect(local.contains { $0.contains("public.\(table)_") }, "\(kind): no statement on a local shard of \(table): \(read.prefix(8))")
                }
                for (phrase, found) in Self.messages(read, saying: Self.notFastPath) {
                    #expect(found.isEmpty, "\(kind): \(found.count) messages say \"\(phrase)\", the first: \(found.first ?? "")")
                }
            }
            try await push(everyDonation)  // every group there again

            // The same rows as the one statement reads (on the same worker, of the same tables).
            var donated = FoldNeeds()
            for identifier in ["soup", "bread", "tea"] { donated.shortcuts.insert(shortcut("soup", identifier)) }
            donated.marks = [.identifier(shortcut("soup", "soup")), .all(bundleId: "com.example.soup"),
                             .group(bundleId: "com.example.soup", group: "g1")]
            donated.forgottenShortcuts = [shortcut("soup", "soup")]
            var mixed = FoldNeeds()
            mixed.shortcuts = [shortcut("soup", "soup"), shortcut("coffee", "latte")]
            mixed.shortcutsInGroups = [FoldNeeds.AppGroup(bundleId: "com.example.soup", group: "g1")]
            mixed.bundles = ["com.example.juice"]
            mixed.marks = [.group(bundleId: "com.example.soup", group: "g1"), .all(bundleId: "com.example.juice"), .all(bundleId: "com.example.soup")]
            mixed.forgottenShortcuts = [shortcut("soup", "soup")]
            mixed.voiceShortcuts = [teaTime]
            mixed.phrases = ["coffee now"]
            mixed.devices = [device, UUID()]
            let rows = ProjectionRowStore(tables: .live, logger: TestDatabase.shared.logger)
            try await worker.withConnection { connection in
                let byFunction = try await rows.readByDistributedFunction(account: account, needs: donated, device: device, on: connection)
                let byStatement = try await rows.read(DonationReadStatement(account: account, needs: donated, device: device), on: connection)
                #expect(byFunction.rows == byStatement.rows)
                #expect(byFunction.head == byStatement.head)
                #expect(byFunction.rows.groups.count == 3 && byFunction.rows.voiceShortcuts.count == 1 && byFunction.rows.marks.count == 2,
                        "\(byFunction.rows)")

                let mixedByFunction = try await rows.readByDistributedFunction(account: account, needs: mixed, device: device, on: connection)
                let mixedByStatement = try await rows.read(FoldReadStatement<LiveProjectionTables>(account: account, needs: mixed, device: device),
                                                           on: connection)
                #expect(mixedByFunction.rows == mixedByStatement.rows)
                #expect(mixedByFunction.head == mixedByStatement.head)
                // Bread's two groups through g1, juice's through its app; not soup/latte (in the pairs' superset) nor soup/cake.
                #expect(Set(mixedByFunction.rows.groups.keys.map(\.shortcut))
                            == [shortcut("soup", "soup"), shortcut("soup", "bread"), shortcut("coffee", "latte"), shortcut("juice", "orange")],
                        "\(mixedByFunction.rows.groups.keys.sorted())")
                #expect(mixedByFunction.rows.groups.count == 5)
                // Tea time's by its id, its pair's by their phrase, coffee now's by the phrase asked, soup time's and
                // juice's by their targets; not the other.
                #expect(Set(mixedByFunction.rows.voiceShortcuts.keys) == [teaTime, alsoTea, coffeeNow, soupTime, juice])
                #expect(Set(mixedByFunction.rows.devices.keys) == [device])
            }
        }
    }

    /// The common pull (`pull_changes`) on the account's worker: the checkpoint, the account's
    /// row, the device's, the head, the cursor's event, the device's last seq and the rows after
    /// the cursor, each a fast-path statement run on the local shard (the checkpoint a reference
    /// table's), with the one statement's rows.
    @Test func aPullIsMadeOfFastPathStatements() async throws {
        try await Self.onTheAccountsWorker { account, device, worker in
            let store = PostgresEventStore(client: worker, logger: TestDatabase.shared.logger)
            let events = (1...4).map { seq in
                Event(seq: Int64(seq), hlc: HLCTimestamp(wallMillis: 1_764_000_000_000 + Int64(seq), counter: 0),
                      body: seq == 4
                        ? .voiceShortcutAdded(VoiceShortcutAdded(voiceShortcutId: UUID(), phrase: "Soup time", bundleId: "com.example.soup",
                                                                 identifier: "soup-1", title: "Soup"))
                        : .donation(Donation(bundleId: "com.example.soup", identifier: "soup-\(seq)", kind: .intent,
                                             intentType: "OrderIntent", title: "Soup \(seq)")))
            }
            for event in events { _ = try await store.append([event], account: account, device: device) }
            // soup-1 removed at version 5: a removal the cursor's pull reads and the reset does not.
            _ = try await store.append([Event(seq: 5, hlc: HLCTimestamp(wallMillis: 1_764_000_000_005, counter: 0),
                                              body: .deletion(Deletion(bundleId: "com.example.soup", selector: .identifiers(["soup-1"]))))],
                                       account: account, device: device)
            let projections = ProjectionStore(client: worker, logger: TestDatabase.shared.logger)
            // After version 2, not the head's: the cursor's event is read too.
            let statement = PullStatement(account: account, device: device, after: 2, limit: 65)
            let debug = try await Self.debugOn(worker)
            let byFunction = try await worker.withConnection { try await projections.pullRowsByDistributedFunction(statement, on: $0) }
            let lines = try await Self.debugOff(worker, since: debug)
            let byStatement = try await worker.withConnection { try await $0.guardedExecute(statement, logger: TestDatabase.shared.logger) }
            #expect("\(byFunction)" == "\(byStatement)")
            #expect(byFunction.count == 5, "the head, the last seq, soup-3, soup-1's removal, the voice shortcut: \(byFunction)")
            // A device that holds nothing: every existing row, no removal.
            let reset = PullStatement.reset(account: account, device: device, limit: 65)
            let resetByFunction = try await worker.withConnection { try await projections.pullRowsByDistributedFunction(reset, on: $0) }
            let resetByStatement = try await worker.withConnection { try await $0.guardedExecute(reset, logger: TestDatabase.shared.logger) }
            #expect("\(resetByFunction)" == "\(resetByStatement)")
            #expect(resetByFunction.count == 5, "the head, the last seq, soup-2, soup-3, the voice shortcut: \(resetByFunction)")

            #expect(lines.contains { $0.range(of: "\(PullFunction.name)(") != nil }, "the pull's call was not found: \(lines.prefix(5))")
            Self.expectFastPath(lines, locallyOn: Self.pullsTables)
        }
    }

    /// The pull of a page (a cursor that stopped inside one) goes the read-only transaction; on
    /// Citus its head is read by fast-path statements of one table each (the checkpoint, the
    /// account's row, the device's, the head), not the join, a router plan; so are its rows.
    /// Five shortcuts in pages of two: the first page by the one statement, the second and the
    /// third by the transaction (their messages read; the third reads the voice shortcuts, which
    /// the second had no room for), and the three bring the five.
    @Test func aPagesPullIsMadeOfFastPathStatements() async throws {
        try await Self.onTheAccountsWorker { account, device, worker in
            let store = PostgresEventStore(client: worker, logger: TestDatabase.shared.logger)
            for seq in Int64(1)...5 {
                _ = try await store.append([Event(seq: seq, hlc: HLCTimestamp(wallMillis: 1_764_000_000_000 + seq, counter: 0),
                                                  body: .donation(Donation(bundleId: "com.example.soup", identifier: "soup-\(seq)", kind: .intent,
                                                                           intentType: "OrderIntent", title: "Soup \(seq)")))],
                                           account: account, device: device)
            }
            let projections = ProjectionStore(client: worker, logger: TestDatabase.shared.logger, pullPageSize: 2)
            let first = try await projections.pull(account: account, device: device, cursor: nil)
            let debug = try await Self.debugOn(worker)
            let second = try await projections.pull(account: account, device: device, cursor: first.cursor)
            let third = try await projections.pull(account: account, device: device, cursor: second.cursor)
            let lines = try await Self.debugOff(worker, since: debug)
            #expect(first.reset && first.more && !second.reset && second.more && !third.reset && !third.more)
            #expect(third.cursor.version == 5 && third.cursor.page == nil)
            let pulled = [first, second, third].flatMap { $0.changes.upsertedShortcuts.map(\.latest.identifier) }
            #expect(pulled.sorted() == (1...5).map { "soup-\($0)" }, "\(pulled)")

            #expect(lines.contains { $0.range(of: "BEGIN") != nil }, "the transaction was not found: \(lines.prefix(5))")
            Self.expectFastPath(lines, locallyOn: Self.pullsTables)
        }
    }

    /// The pull's record (`record_pull`) on the account's worker: a read of the device's sync
    /// row, the head's lock, the device's read (a reference table's local placement), the row's
    /// write and the token's version, each a fast-path statement
    /// run on the local shard, both when the record writes (the version moved on) and when it
    /// finds the row current.
    @Test func aPullsRecordIsWrittenByFastPathStatements() async throws {
        try await Self.onTheAccountsWorker { account, device, worker in
            let store = DeviceSyncStore(client: worker, logger: TestDatabase.shared.logger)
            let at = Date()
            // Six records that write first (the version moves on each time), then one that writes
            // and one that finds the row current.
            for version in Int64(1)...6 {
                try await store.recordPull(device: device, account: account, version: version, complete: true, at: at)
            }
            let debug = try await Self.debugOn(worker)
            try await store.recordPull(device: device, account: account, version: 7, complete: true, at: at)
            try await store.recordPull(device: device, account: account, version: 7, complete: true, at: at)
            let lines = try await Self.debugOff(worker, since: debug)
            let synced = try await worker.query("SELECT synced_version FROM device_sync WHERE account_id = \(account) AND device_id = \(device)")
                .decode(Int64.self).collectAll()
            #expect(synced == [7])
            let calls = lines.filter { $0.range(of: "SELECT \(RecordPullFunction.name)(") != nil }
            #expect(!calls.isEmpty, "the record's call was not found: \(lines.prefix(5))")
            let local = lines.filter { $0.range(of: "executing the command locally") != nil }
            for table in ["device_sync", "account_heads", "devices", "push_tokens"] {
                #expect(local.contains { $0.contains("public.\(table)_") }, "no statement on a local shard of \(table): \(lines.prefix(5))")
            }
            for (phrase, found) in Self.messages(lines, saying: Self.notFastPath) {
                #expect(found.isEmpty, "\(found.count) messages say \"\(phrase)\", the first: \(found.first ?? "")")
            }
        }
    }

    /// A maintenance step on the account's worker, for an account behind its head (as an import
    /// leaves it): the lock of its head and whether it is parked, its log, the rows its events
    /// need (`fold_read`), what a late deletion covers and a late forget's sums counted again from
    /// the log, the stored forgets, the write (`fold_write`), its folded version and its
    /// unparking, each a fast-path statement run on the local shard. The queue's read of
    /// candidates reads every shard by design and is left out. The view it folds is the one the
    /// domain folds from the whole log.
    @Test func aMaintenanceStepIsMadeOfFastPathStatements() async throws {
        try await Self.onTheAccountsWorker { account, device, worker in
            var phone = DeviceScript(device, account: account)
            // Two donations of each soup, a forget (so that the account's forgets are read), a phrase.
            var first = (0..<8).map { index in phone.donate("soup-\(index % 4)", at: 1_000 + Int64(index) * 10) }
            first.append(phone.forget(.shortcut(ShortcutID(bundleId: "com.example.soup", identifier: "soup-3")), at: 1_080))
            first.append(phone.addVoice(UUID(), phrase: "soup please", to: "soup-0", at: 1_090))
            // A deletion among soup-1's donations (a recount), a forget among soup-2's (a resum), a new soup.
            let second = [phone.delete(.identifiers(["soup-1"]), at: 1_030),
                          phone.forget(.shortcut(ShortcutID(bundleId: "com.example.soup", identifier: "soup-2")), at: 1_045),
                          phone.donate("soup-4", at: 1_100)]
            let projections = ProjectionStore(client: worker, logger: TestDatabase.shared.logger)
            try await writeBacklog(first, account: account, client: worker)
            guard case .folded = try await projections.foldNextBehind(batchSize: 100, parkedRetry: (.seconds(1), .seconds(1))) else {
                Issue.record("the first batch was not folded"); return
            }
            try await writeBacklog(second, account: account, client: worker)
            let debug = try await Self.debugOn(worker)
            let step = try await projections.foldNextBehind(batchSize: 100, parkedRetry: (.seconds(1), .seconds(1)))
            let lines = try await Self.debugOff(worker, since: debug)
            guard case .folded(account, 3) = step else { Issue.record("the second batch was not folded: \(step)"); return }
            let view = try await projections.fullView(account: account, device: device)
            #expect(view == AccountState(folding: first + second).view(forDevice: device))

            // Each statement's lines, from its parse to the next; the candidates' read apart.
            var statements: [[String]] = []
            for line in lines {
                if line.range(of: "DEBUG:  parse ") != nil || statements.isEmpty { statements.append([]) }
                statements[statements.count - 1].append(line)
            }
            let candidates = statements.filter { $0[0].range(of: "ORDER BY h.behind DESC") != nil }
            #expect(candidates.count == 1, "the candidates' read was not found: \(lines.prefix(5))")
            let stepLines = statements.filter { $0[0].range(of: "ORDER BY h.behind DESC") == nil }.flatMap { $0 }
            for (what, text) in [("the write", "SELECT \(FoldWriteFunction.name)("), ("the read", "SELECT * FROM \(FoldReadFunction.name)("),
                                 ("the stored forgets", "m.scope =")] {
                #expect(stepLines.contains { $0.range(of: "DEBUG:  parse ") != nil && $0.range(of: text) != nil }, "\(what) was not found: \(lines.prefix(5))")
            }
            #expect(stepLines.filter { $0.range(of: "DEBUG:  parse ") != nil && $0.range(of: "e.type = 'donation'") != nil }.count == 2,
                    "the recount's and the resum's reads of the log")
            Self.expectFastPath(stepLines, locallyOn: ["account_heads", "projection_parked_accounts", "events", "projection_accounts",
                                                   "projection_donation_groups", "projection_deletion_marks", "projection_shortcuts"])
        }
    }

    /// A worker's session keeps its size through the pushes, reads and pulls it runs: Citus 13.2
    /// kept a local plan for every run of a generic plan whose account is a parameter, about
    /// 35 KB a statement, so that a session grew without end (`DistributedFunctions.settings`).
    /// Two hundred pushes, each read again (no kept rows), a whole-view pull and its record, on
    /// one session with PostgreSQL's default plan cache mode, as Citus's own sessions on a worker
    /// have it: the functions' own setting alone holds it. Without it the session grew by 286 MB
    /// (about 1.4 MB a round; tried), and without the service's the next test's by 17 MB.
    @Test func aWorkersSessionKeepsItsSizeThroughPushesAndPulls() async throws {
        try await Self.onTheAccountsWorker { account, device, worker in
            var store = PostgresEventStore(client: worker, logger: TestDatabase.shared.logger)
            store.readCache = nil  // every push reads its rows (fold_read)
            let projections = ProjectionStore(client: worker, logger: TestDatabase.shared.logger)
            let sync = DeviceSyncStore(client: worker, logger: TestDatabase.shared.logger)
            var seq: Int64 = 0
            func round() async throws {
                seq += 1
                let donation = Event(seq: seq, hlc: HLCTimestamp(wallMillis: 1_764_000_000_000 + seq, counter: 0),
                                     body: .donation(Donation(bundleId: "com.example.soup", identifier: "soup-\(seq % 5)", kind: .intent,
                                                              intentType: "OrderIntent", title: "Soup \(seq % 5)")))
                #expect(try await store.append([donation], account: account, device: device).appended == 1)
                let snapshot = try await projections.pull(account: account, device: device, cursor: nil)
                try await sync.recordPull(device: device, account: account, version: snapshot.cursor.version, complete: !snapshot.more)
            }
            func size() async throws -> Int64 {
                try await worker.query(Self.sessionBytes).decode(Int64.self).collectAll().first ?? 0
            }
            #expect(try await worker.query("SHOW plan_cache_mode").decode(String.self).collectAll() == ["auto"])
            for _ in 0..<10 { try await round() }  // warm-up: the session's caches made
            let before = try await size()
            for _ in 0..<200 { try await round() }
            let grown = try await size() - before
            #expect(grown < 8 << 20, "the session grew by \(grown) bytes in 200 pushes and pulls")
        }
    }

    /// The service's sessions on a Citus node plan each statement with its values
    /// (`serviceClientConfiguration`), so that the statements it prepares keep the session's size
    /// too: a fast-path read by account, prepared and run 300 times on the account's worker.
    @Test func aServicesSessionOnAWorkerKeepsItsSizeThroughPreparedStatements() async throws {
        try await TestDatabase.withClient { coordinator, url in
            let account = UUID()
            try await openAccount(account, client: coordinator)
            let node = try await CitusCluster.node(ofAccount: account, client: coordinator)
            let worker = try await url.onNode(try #require(node)).servicePool(maximumConnections: 1, keptOpen: 0, logger: TestDatabase.shared.logger)
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { await worker.run() }
                defer { group.cancelAll() }
                #expect(try await worker.query("SHOW plan_cache_mode").decode(String.self).collectAll() == ["force_custom_plan"])
                try await worker.withConnection { connection in
                    func size() async throws -> Int64 {
                        try await connection.query(Self.sessionBytes, logger: TestDatabase.shared.logger).decode(Int64.self).collectAll().first ?? 0
                    }
                    func read() async throws -> [Int64] {
                        var versions: [Int64] = []
                        for try await version in try await connection.execute(HeadVersion(account: account), logger: TestDatabase.shared.logger) {
                            versions.append(version)
                        }
                        return versions
                    }
                    for _ in 0..<10 { #expect(try await read().count == 1) }  // warm-up: past the five runs before a generic plan
                    let before = try await size()
                    for _ in 0..<300 { _ = try await read() }
                    let grown = try await size() - before
                    #expect(grown < 4 << 20, "the session grew by \(grown) bytes in 300 runs of a prepared statement")
                }
            }
        }
    }

    /// The bytes of the session's memory contexts.
    static let sessionBytes: PostgresQuery = "SELECT sum(total_bytes)::int8 FROM pg_backend_memory_contexts"

    /// A fast-path read of one account's head, prepared.
    struct HeadVersion: PostgresPreparedStatement {
        static let name = "CitusFastPathTests.headVersion"
        static let sql = "SELECT version FROM account_heads WHERE account_id = $1"
        typealias Row = Int64
        let account: UUID
        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings()
            bindings.append(account)
            return bindings
        }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int64.self) }
    }

    /// Runs `body` with a new account and device, and a one-connection pool on the worker that
    /// holds the account's shards (one connection, so that the session's settings hold for every
    /// statement of the store).
    static func onTheAccountsWorker(_ body: @escaping @Sendable (_ account: UUID, _ device: UUID, _ worker: PostgresClient) async throws -> Void) async throws {
        try await TestDatabase.withClient { coordinator, url in
            let account = UUID(), device = UUID()
            try await openAccount(account, client: coordinator)
            try await openDevices([device], of: account, client: coordinator)
            let node = try await CitusCluster.node(ofAccount: account, client: coordinator)
            let worker = try url.onNode(try #require(node)).commandPool(maximumConnections: 1, logger: TestDatabase.shared.logger)
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { await worker.run() }
                defer { group.cancelAll() }
                try await body(account, device, worker)
            }
        }
    }

    /// Turns Citus's debug messages on for `worker`'s session.
    static func debugOn(_ worker: PostgresClient) async throws -> (logStart: Int64, pid: Int32) {
        _ = try await worker.query("SET citus.log_local_commands = on").collectAll()
        _ = try await worker.query("SET log_min_messages = debug2").collectAll()
        let logStart = try await worker.query("SELECT (pg_stat_file(\(unescaped: Self.logFile))).size").decode(Int64.self).collectAll().first ?? 0
        let pid = try await worker.query("SELECT pg_backend_pid()").decode(Int32.self).collectAll().first ?? 0
        return (logStart, pid)
    }

    /// Turns them off again, and reads the session's messages in the worker's log since `debugOn`
    /// (a message over several lines as one).
    static func debugOff(_ worker: PostgresClient, since start: (logStart: Int64, pid: Int32)) async throws -> [String] {
        _ = try await worker.query("RESET log_min_messages").collectAll()
        let log = try await worker.query("""
            SELECT pg_read_file(\(unescaped: Self.logFile), \(start.logStart), (pg_stat_file(\(unescaped: Self.logFile))).size - \(start.logStart))
            """).decode(String.self).collectAll().first ?? ""
        // A message's text may go on over lines of its own (a statement's): each joined to its first.
        var messages: [String] = []
        for line in log.split(separator: "\n") {
            if line.first?.isNumber == true || messages.isEmpty { messages.append(String(line)) } else { messages[messages.count - 1] += " " + line }
        }
        return messages.filter { $0.contains("[\(start.pid)]") && !$0.contains("CONTEXT:") }
    }

    /// The tables a pull reads, the transactional one and `pull_changes` alike.
    static let pullsTables = ["projection_accounts", "projection_devices", "account_heads", "events", "projection_shortcuts",
                              "projection_voice_shortcuts"]

    /// Expects a statement run on a local shard of each of `tables` among `lines`, and none of
    /// Citus's messages of a statement that is not a fast-path one (`notFastPath`, `messages`).
    static func expectFastPath(_ lines: [String], locallyOn tables: [String]) {
        let local = lines.filter { $0.range(of: "executing the command locally") != nil }
        for table in tables {
            #expect(local.contains { $0.contains("public.\(table)_") }, "no statement on a local shard of \(table): \(lines.prefix(8))")
        }
        for (phrase, found) in messages(lines, saying: notFastPath) {
            #expect(found.isEmpty, "\(found.count) messages say \"\(phrase)\", the first: \(found.first ?? "")")
        }
    }

    /// The lines that hold each phrase, and the router plans made for a statement that is not a
    /// fast-path one. Citus says "Creating router plan" as it plans either; for a fast-path
    /// `SELECT`, `UPDATE` or `DELETE` after "Deferred pruning for a fast-path router query" (or
    /// "Distributed planning for …"), for an `INSERT … VALUES` alone, and for a statement with a
    /// join or a subquery alone too (tried). So a plan said alone counts unless the command it
    /// runs next on the local shard is an `INSERT … VALUES`.
    static func messages(_ lines: [String], saying phrases: [String]) -> [(String, [String])] {
        var fastPath = false, alone: String?, offTheFastPath: [String] = []
        for line in lines {
            if line.range(of: "for a fast-path router query") != nil {
                fastPath = true
            } else if line.range(of: "Creating router plan") != nil {
                if let alone { offTheFastPath.append(alone) }
                alone = fastPath ? nil : line
                fastPath = false
            } else if let plan = alone, let command = line.range(of: "executing the command locally: ") {
                let text = line[command.upperBound...]
                if !text.hasPrefix("INSERT INTO ") || text.range(of: " SELECT ") != nil { offTheFastPath.append(plan) }
                alone = nil
            }
        }
        if let alone { offTheFastPath.append(alone) }
        return phrases.map { phrase in (phrase, lines.filter { line in line.range(of: phrase) != nil }) }
            + [("Creating router plan (not for a fast-path statement)", offTheFastPath)]
    }
}

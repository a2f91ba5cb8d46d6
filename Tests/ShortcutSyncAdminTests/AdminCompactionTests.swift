import Foundation
import PostgresNIO
import ShortcutSyncAdmin
import ShortcutSyncChildProcess
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

private let logger = TestDatabase.shared.logger

/// `admin compact` and the commands that read history, on compacted accounts (issue 58): what a
/// compaction did or would do, account by account; replays, events and histories from before an
/// account's horizon refused in one line.
@Suite struct AdminCompactionTests {
    /// Two accounts with ten donations each, one a push (versions 1…10, at 1000…1090).
    private func twoAccounts(client: PostgresClient) async throws -> (DeviceScript, DeviceScript) {
        var phone = DeviceScript(), pad = DeviceScript()
        try await register([phone, pad], client: client)
        let store = PostgresEventStore(client: client, logger: logger)
        for index in 0..<10 {
            _ = try await store.append([phone.donate("soup-\(index % 3)", at: 1000 + Int64(index) * 10).event], account: phone.account,
                                       device: phone.deviceId)
            _ = try await store.append([pad.donate("tea-\(index % 2)", bundle: "com.example.tea", at: 1000 + Int64(index) * 10).event],
                                       account: pad.account, device: pad.deviceId)
        }
        return (phone, pad)
    }

    private func eventCount(_ account: UUID, client: PostgresClient) async throws -> Int64 {
        try await client.query("SELECT count(*) FROM events WHERE account_id = \(account)", logger: logger)
            .decode(Int64.self).collectAll().first ?? 0
    }

    @Test func compactingEveryAccountSaysWhatItFreedAndADryRunChangesNothing() async throws {
        try await TestDatabase.withClient { client, _ in
            let (phone, pad) = try await twoAccounts(client: client)
            let admin = Operator(client: client, logger: logger)
            let steps = Counter()

            let dry = try await admin.compact(account: nil, target: .head, dryRun: true) { done, _ in await steps.set(done) }
            #expect(dry.accounts.map(\.accountId) == [phone.account, pad.account] || dry.accounts.map(\.accountId) == [pad.account, phone.account])
            #expect(dry.accounts.allSatisfy { $0.outcome == "compacted" && $0.horizonVersion == 10 && $0.eventsRemoved > 0 })
            #expect(await steps.value == 2)
            #expect(try await eventCount(phone.account, client: client) == 10, "a dry run removes nothing")
            #expect(dry.text.contains("would compact") && dry.text.contains("Would compact 2 accounts of 2"), "\(dry.text)")

            // Through version 4 of one account: its kept events are its groups' latest donations
            // (versions 2, 3, 4) and the device's last event (10, above the horizon).
            let one = try await admin.compact(account: phone.account, target: .through(4), dryRun: false)
            #expect(one.accounts.count == 1 && one.accounts[0].outcome == "compacted" && one.accounts[0].horizonVersion == 4)
            #expect(one.accounts[0].horizonTime == Date(timeIntervalSince1970: 1.030))
            #expect(one.accounts[0].eventsRemoved == 1 && one.accounts[0].eventsKept == 3, "\(one.accounts[0])")
            #expect(one.accounts[0].bytesRemoved > 0)
            #expect(try await eventCount(phone.account, client: client) == 9)
            #expect(one.text.contains("Compacted 1 account of 1: removed 1 event"), "\(one.text)")

            // Everything, by time: the phone's account compacts past 4, the pad's through its head;
            // again, nothing older.
            let all = try await admin.compact(account: nil, target: .before(Date().addingTimeInterval(60)), dryRun: false)
            #expect(all.accounts.allSatisfy { $0.outcome == "compacted" && $0.horizonVersion == 10 }, "\(all.accounts)")
            #expect(all.eventsRemoved == all.accounts.reduce(0) { $0 + $1.eventsRemoved } && all.eventsRemoved > 0)
            let again = try await admin.compact(account: nil, target: .head, dryRun: false)
            #expect(again.accounts.allSatisfy { $0.outcome == "nothingOlder" && $0.eventsRemoved == 0 && $0.horizonVersion == 10 })
            #expect(again.text.contains("nothing older"))
            // Before any event: nothing to compact.
            #expect(try await admin.compact(account: phone.account, target: .before(Date(timeIntervalSince1970: 0)), dryRun: false)
                    .accounts.first?.outcome == "nothingOlder")

            let verified = try await admin.verify { _, _ in }
            #expect(verified.consistent, "\(verified.differences.prefix(3))")
            await #expect(throws: AdminUsageError.self) {
                try await admin.compact(account: UUID(), target: .head, dryRun: false)
            }
        }
    }

    /// Before an account's horizon, replays and event listings answer "compacted through version
    /// H (time)"; events and histories start after it and say so, the kept events below it not
    /// shown.
    @Test func historyBeforeTheHorizonIsRefusedAndStartsAfterIt() async throws {
        try await TestDatabase.withClient { client, _ in
            let (phone, _) = try await twoAccounts(client: client)
            let admin = Operator(client: client, logger: logger)
            let tomato = ShortcutID(bundleId: "com.example.soup", identifier: "soup-0")
            // Uncompacted: the whole history, and a replay.
            #expect(try await admin.history(account: phone.account, shortcut: tomato).entries.map(\.version) == [1, 4, 7, 10])
            #expect(try await admin.shortcuts(device: phone.deviceId, prefix: .throughVersion(3)).eventsReplayed == 3)

            _ = try await admin.compact(account: phone.account, target: .through(6), dryRun: false)
            let said = "compacted through version 6 (1970-01-01T00:00:01.050000Z)"
            for prefix in [LogPrefix.throughVersion(3), .throughVersion(8), .recordedBy(Date())] {
                do {
                    _ = try await admin.shortcuts(device: phone.deviceId, prefix: prefix)
                    Issue.record("a replay of a compacted account at \(prefix) answered")
                } catch let error as AdminUsageError {
                    #expect(error.description.contains(said) && !error.description.contains("\n"), "\(error)")
                }
            }
            #expect(try await admin.shortcuts(device: phone.deviceId).view.shortcuts.count == 3, "the view now is answered")

            let history = try await admin.history(account: phone.account, shortcut: tomato)
            #expect(history.entries.map(\.version) == [7, 10], "the kept donation at 4 is not history")
            #expect(history.compacted?.version == 6 && history.text.contains("Compacted through version 6"))

            let events = try await admin.events(EventFilter(account: phone.account), limit: 100)
            #expect(events.events.map(\.version) == [7, 8, 9, 10])
            #expect(events.compacted?.version == 6 && events.text.hasPrefix("Compacted through version 6"))
            #expect(try await admin.events(EventFilter(account: phone.account, afterVersion: 8), limit: 100).events.map(\.version) == [9, 10])
            do {
                _ = try await admin.events(EventFilter(account: phone.account, afterVersion: 2), limit: 100)
                Issue.record("events after 2 of an account compacted through 6 answered")
            } catch let error as AdminUsageError {
                #expect(error.description.contains(said), "\(error)")
            }
            // An export carries the horizon and the snapshot (CompactedArchiveTests imports it).
            let export = try await admin.export(account: phone.account)
            #expect(export.contains { $0.contains(#""kind":"horizon""#) && $0.contains(#""version":6"#) })
        }
    }

    /// The executable: the report as a table and as JSON, bad input in one line with status 2.
    @Test func theCommandLine() async throws {
        try await TestDatabase.withClient { client, url in
            let (phone, _) = try await twoAccounts(client: client)
            // Given in the environment, a password draws no warning: standard error is the error alone.
            let database = ["DATABASE_URL": url.urlString]

            let dry = try await CommandProcess.run(["admin", "compact", "--dry-run", "--json"], environment: database)
            defer { dry.forceStop() }
            #expect(dry.exitStatus == 0, "\(dry.errorOutput)")
            let report = try JSONSerialization.jsonObject(with: Data(dry.output.utf8)) as? [String: Any]
            #expect(report?["dryRun"] as? Bool == true)
            #expect((report?["accounts"] as? [[String: Any]])?.count == 2)
            #expect((report?["eventsRemoved"] as? Int ?? 0) > 0)
            #expect(try await eventCount(phone.account, client: client) == 10)

            let one = try await CommandProcess.run(["admin", "compact", "--account", phone.account.uuidString, "--through", "6"], environment: database)
            defer { one.forceStop() }
            #expect(one.exitStatus == 0, "\(one.errorOutput)")
            #expect(one.output.contains("compacted") && one.output.contains("Compacted 1 account of 1"), "\(one.output)")

            let replay = try await CommandProcess.run(["admin", "shortcuts", "--device", phone.deviceId.uuidString, "--at", "2"], environment: database)
            defer { replay.forceStop() }
            #expect(replay.exitStatus == 2)
            #expect(replay.errorOutput.hasPrefix("error: account") && replay.errorOutput.contains("compacted through version 6 (")
                    && replay.errorOutput.split(separator: "\n").count == 1,
                    "\(replay.errorOutput)")

            for bad in [["--through", "0"], ["--through", "3", "--before", "2026-01-01T00:00:00Z"], ["--before", "yesterday"],
                        ["--account", "nope"], ["--account", UUID().uuidString]] {
                let run = try await CommandProcess.run(["admin", "compact"] + bad, environment: database)
                defer { run.forceStop() }
                #expect(run.exitStatus == 2, "\(bad): \(run.errorOutput)")
                // One line that says what is wrong (argument errors add the usual pointer to --help).
                #expect(run.errorOutput.hasPrefix("error: ") && !run.errorOutput.contains("PSQLError"), "\(bad): \(run.errorOutput)")
            }
        }
    }
}

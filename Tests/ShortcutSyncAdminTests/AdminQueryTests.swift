import Foundation
import PostgresNIO
import ShortcutSyncAdmin
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

private let logger = TestDatabase.shared.logger

/// The operators' queries against a real PostgreSQL holding a known history.
@Suite struct AdminQueryTests {
    /// `shortcuts --at P` and `--as-of T` replay the log: at every position and time, what the
    /// domain folds of the events up to it, for every device (app filters included); the
    /// view now is what the live projections hold.
    @Test func aDevicesViewOfThePastIsTheFoldOfTheLogUpToThen() async throws {
        try await TestDatabase.withClient { client, url in
            var scenario = Scenario(seed: 11, accounts: 2, devicesPerAccount: 3)
            let log = try await PushLog.registering(&scenario, pushes: 40, client: client)
            let store = ProjectionStore(client: client, logger: logger)
            try await withConnection(url) { connection in _ = try await store.foldAll(on: connection) }
            let admin = Operator(client: client, logger: logger)
            let account = scenario.devices[0].account
            let recorded = try await OperatorStore(client: client, logger: logger).accountLog(account, .all)
            #expect(recorded.count == log.accepted[account]?.count)

            let devices = scenario.devices.filter { $0.account == account }
            var replayedItems = 0
            let positions = [0] + recorded.map(\.position).enumerated().filter { $0.offset % 7 == 0 }.map(\.element) + [recorded.last!.position]
            for device in devices {
                for position in positions {
                    let report = try await admin.shortcuts(device: device.deviceId, prefix: .throughPosition(position))
                    let expected = AccountState(folding: recorded.filter { $0.position <= position }.map(\.accepted)).view(forDevice: device.deviceId)
                    #expect(report.view == expected, "device \(device.deviceId) at \(position)")
                    replayedItems += report.shortcuts.count + report.voiceShortcuts.count
                    #expect(report.source == "replay" && report.atPosition == position)
                }
                for time in Set(recorded.map(\.recordedAt)).sorted() {
                    let report = try await admin.shortcuts(device: device.deviceId, prefix: .recordedBy(time))
                    let expected = AccountState(folding: recorded.filter { $0.recordedAt <= time }.map(\.accepted)).view(forDevice: device.deviceId)
                    #expect(report.view == expected, "device \(device.deviceId) as of \(time)")
                }
                let now = try await admin.shortcuts(device: device.deviceId)
                #expect(now.source == "projections")
                #expect(now.view == log.expectedView(account: account, device: device.deviceId))
            }
            // The views compared were not all empty.
            #expect(replayedItems > 0)
        }
    }

    @Test func accountsAndDevicesAreListedWithWhatTheyPushedAndReported() async throws {
        try await TestDatabase.withClient { client, url in
            var phone = DeviceScript(detail: .full)
            let watch = DeviceScript(account: phone.account)
            let other = DeviceScript()
            try await register([phone, watch, other], client: client)
            var log = PushLog(client: client)
            try await log.push(phone, [phone.donate("tomato", at: 100), phone.donate("leek", at: 110), phone.report(["com.example.soup"], at: 120)])
            let store = ProjectionStore(client: client, logger: logger)
            try await withConnection(url) { connection in _ = try await store.foldAll(on: connection) }

            let admin = Operator(client: client, logger: logger)
            let accounts = try await admin.accounts().accounts
            #expect(Set(accounts.map(\.accountId)) == [phone.account, other.account])
            let mine = try #require(accounts.first { $0.accountId == phone.account })
            #expect(mine.devices == 2 && mine.events == 3 && mine.lastEventAt != nil)

            let devices = try await admin.devices(account: phone.account)
            #expect(devices.devices.map(\.deviceId) == [phone.deviceId, watch.deviceId])
            #expect(devices.devices[0].events == 3 && devices.devices[0].lastAcceptedSeq == 3)
            #expect(devices.devices[0].installedApps == ["com.example.soup"])
            #expect(devices.devices[1].events == 0 && devices.devices[1].installedApps == nil)
            #expect(devices.text.contains("1 reported") && devices.text.contains("Device 1"))

            await #expect(throws: AdminUsageError.self) { try await admin.devices(account: UUID()) }
            await #expect(throws: AdminUsageError.self) { try await admin.shortcuts(device: UUID()) }
        }
    }

    @Test func voiceShortcutsShowTheirConflicts() async throws {
        try await TestDatabase.withClient { client, url in
            var phone = DeviceScript()
            var mac = DeviceScript(account: phone.account)
            try await register([phone, mac], client: client)
            let first = UUID(), second = UUID()
            var log = PushLog(client: client)
            try await log.push(phone, [phone.donate("tomato", at: 100), phone.addVoice(first, phrase: "Order soup", to: "tomato", at: 110)])
            try await log.push(mac, [mac.donate("leek", at: 105), mac.addVoice(second, phrase: "order  SOUP!", to: "leek", at: 120)])
            let store = ProjectionStore(client: client, logger: logger)
            try await withConnection(url) { connection in _ = try await store.foldAll(on: connection) }

            let admin = Operator(client: client, logger: logger)
            let all = try await admin.voiceShortcuts(account: phone.account, conflictsOnly: false).voiceShortcuts
            #expect(Set(all.map(\.voiceShortcutId)) == [first, second])
            let conflicts = try await admin.voiceShortcuts(account: phone.account, conflictsOnly: true)
            #expect(conflicts.voiceShortcuts.map(\.voiceShortcutId) == [second])
            #expect(conflicts.voiceShortcuts.first?.conflictsWith == first)
            #expect(conflicts.text.contains("phraseConflict") && conflicts.text.contains(first.uuidString.lowercased()))
        }
    }

    @Test func eventsAreListedByDeviceTypeAndPosition() async throws {
        try await TestDatabase.withClient { client, _ in
            var phone = DeviceScript()
            var mac = DeviceScript(account: phone.account)
            try await register([phone, mac], client: client)
            var log = PushLog(client: client)
            try await log.push(phone, [phone.donate("tomato", at: 100), phone.delete(.all, at: 110)])
            try await log.push(mac, [mac.donate("leek", at: 120), mac.donate("kale", at: 130)])
            let admin = Operator(client: client, logger: logger)

            let listed = try await admin.events(EventFilter(account: phone.account), limit: 100)
            let all = listed.events
            #expect(all.map(\.event.seq) == [1, 2, 1, 2])
            #expect(all.map(\.position) == all.map(\.position).sorted())
            let macs = try await admin.events(EventFilter(account: phone.account, device: mac.deviceId), limit: 100).events
            #expect(macs.allSatisfy { $0.deviceId == mac.deviceId } && macs.count == 2)
            let deletions = try await admin.events(EventFilter(account: phone.account, type: .deletion), limit: 100).events
            #expect(deletions.map(\.event.type) == [.deletion])
            let later = try await admin.events(EventFilter(account: phone.account, afterPosition: all[1].position), limit: 1)
            #expect(later.events.map(\.position) == [all[2].position])
            // A page says when more follow and how to ask for them (DESIGN §7).
            #expect(later.more && later.nextAfter == all[2].position)
            #expect(later.text.contains("--after \(all[2].position)"))
            #expect(!listed.more && listed.nextAfter == nil)
            let last = try await admin.events(EventFilter(account: phone.account, afterPosition: all[2].position), limit: 1)
            #expect(last.events.map(\.position) == [all[3].position] && !last.more)
            #expect(listed.text.contains("com.example.soup all") && listed.text.contains("com.example.soup/kale"))
        }
    }

    @Test func historyNamesWhatEachStoredEventDidToTheShortcut() async throws {
        try await TestDatabase.withClient { client, _ in
            var phone = DeviceScript()
            try await register([phone], client: client)
            var log = PushLog(client: client)
            try await log.push(phone, [phone.donate("tomato", at: 100), phone.donate("leek", at: 105)])
            try await log.push(phone, [phone.delete(.identifiers(["tomato"]), at: 200), phone.donate("tomato", at: 300)])
            let admin = Operator(client: client, logger: logger)
            let history = try await admin.history(account: phone.account, shortcut: ShortcutID(bundleId: "com.example.soup", identifier: "tomato"))
            #expect(history.entries.map { $0.effects.map(\.kind) } == [["created"], ["deleted"], ["broughtBack"]])
            #expect(history.entries.map(\.type) == [.donation, .deletion, .donation])
            #expect(history.text.contains("brought back"))
        }
    }

    /// A transaction left open holds the log's horizon back: events committed after it cannot
    /// be read yet, and `projections status` names it.
    @Test func statusNamesTheOpenTransactionThatHoldsTheHorizonBack() async throws {
        try await TestDatabase.withClient { client, url in
            var phone = DeviceScript()
            try await register([phone], client: client)
            let admin = Operator(client: client, logger: logger)
            var log = PushLog(client: client)
            try await withConnection(url) { holder in
                try await holder.query("SET application_name = 'stalled-reader'", logger: logger)
                let pid = try await holder.query("SELECT pg_backend_pid()", logger: logger).decode(Int32.self).collectAll().first
                try await holder.query("BEGIN", logger: logger)
                try await holder.query("SELECT pg_current_xact_id()", logger: logger)
                try await log.push(phone, [phone.donate("tomato", at: 100)])

                let held = try await admin.status()
                #expect(held.eventsBehindHorizon >= 1)
                #expect(held.horizonHolder?.pid == pid)
                #expect(held.horizonHolder?.applicationName == "stalled-reader")
                #expect(held.text.contains("stalled-reader"))
                try await holder.query("ROLLBACK", logger: logger)
            }
            // (Other tests' transactions in the same server may hold it a moment: not this one.)
            let free = try await admin.status()
            #expect(free.horizonHolder?.applicationName != "stalled-reader")
            #expect(free.pendingEvents == 1 && free.headPosition >= 1)
        }
    }
}

extension ShortcutsReport {
    /// The report's items as a view, to compare with the domain's.
    var view: DeviceView {
        DeviceView(shortcuts: Dictionary(uniqueKeysWithValues: shortcuts.map { ($0.shortcutID, $0) }),
                   voiceShortcuts: Dictionary(uniqueKeysWithValues: voiceShortcuts.map { ($0.voiceShortcutId, $0) }))
    }
}

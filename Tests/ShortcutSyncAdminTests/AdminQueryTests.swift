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
    /// `shortcuts --at V` and `--as-of T` replay the account's log: at every version and time,
    /// what the domain folds of the events up to it, for every device (app filters included);
    /// the view now is what the live projections hold (each push folded its own events).
    @Test func aDevicesViewOfThePastIsTheFoldOfTheLogUpToThen() async throws {
        try await TestDatabase.withClient { client, _ in
            var scenario = Scenario(seed: 11, accounts: 2, devicesPerAccount: 3)
            let log = try await PushLog.registering(&scenario, pushes: 40, client: client)
            let admin = Operator(client: client, logger: logger)
            let account = scenario.devices[0].account
            let recorded = try await OperatorStore(client: client, logger: logger).accountLog(account, .all)
            #expect(recorded.count == log.accepted[account]?.count)
            #expect(recorded.map(\.version) == Array(1...Int64(recorded.count)))

            let devices = scenario.devices.filter { $0.account == account }
            var replayedItems = 0
            let versions = [0] + recorded.map(\.version).filter { $0 % 7 == 1 } + [recorded.last!.version]
            for device in devices {
                for version in versions {
                    let report = try await admin.shortcuts(device: device.deviceId, prefix: .throughVersion(version))
                    let expected = AccountState(folding: recorded.prefix(Int(version)).map(\.accepted)).view(forDevice: device.deviceId)
                    #expect(report.view == expected, "device \(device.deviceId) at \(version)")
                    #expect(report.eventsReplayed == Int(version))
                    replayedItems += report.shortcuts.count + report.voiceShortcuts.count
                    #expect(report.source == "replay" && report.atVersion == version)
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
        try await TestDatabase.withClient { client, _ in
            var phone = DeviceScript(detail: .full)
            let watch = DeviceScript(account: phone.account)
            let other = DeviceScript()
            try await register([phone, watch, other], client: client)
            var log = PushLog(client: client)
            try await log.push(phone, [phone.donate("tomato", at: 100), phone.donate("leek", at: 110), phone.report(["com.example.soup"], at: 120)])

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

            // The watch registers a push token and is woken once: the report shows the token's
            // first 8 hex digits only, its last wake and its count.
            let pushTokens = PushTokenStore(client: client, logger: logger)
            let token = "0123456789abcdef" + String(repeating: "e", count: 48)
            #expect(try await pushTokens.register(PushTokenRegistration(token: token, topic: "com.example.soup", environment: "development"),
                                                  device: watch.deviceId, account: watch.account))
            try await pushTokens.scheduleWakes(account: watch.account, version: 3, delay: .zero)
            let wake = try #require(try await pushTokens.claimDue(limit: 1, interval: .seconds(1200)).first)
            try await pushTokens.delivered(wake)
            let woken = try await admin.devices(account: phone.account)
            #expect(woken.devices[1].pushToken == "01234567…" && woken.devices[1].pushEnvironment == "development")
            #expect(woken.devices[1].wakeCount == 1 && woken.devices[1].lastWakeAt != nil)
            #expect(woken.devices[0].pushToken == nil && woken.devices[0].wakeCount == 0)
            #expect(woken.text.contains("01234567… development") && !woken.text.contains(token))

            await #expect(throws: AdminUsageError.self) { try await admin.devices(account: UUID()) }
            await #expect(throws: AdminUsageError.self) { try await admin.shortcuts(device: UUID()) }
        }
    }

    @Test func voiceShortcutsShowTheirConflicts() async throws {
        try await TestDatabase.withClient { client, _ in
            var phone = DeviceScript()
            var mac = DeviceScript(account: phone.account)
            try await register([phone, mac], client: client)
            let first = UUID(), second = UUID()
            var log = PushLog(client: client)
            try await log.push(phone, [phone.donate("tomato", at: 100), phone.addVoice(first, phrase: "Order soup", to: "tomato", at: 110)])
            try await log.push(mac, [mac.donate("leek", at: 105), mac.addVoice(second, phrase: "order  SOUP!", to: "leek", at: 120)])

            let admin = Operator(client: client, logger: logger)
            let all = try await admin.voiceShortcuts(account: phone.account, conflictsOnly: false).voiceShortcuts
            #expect(Set(all.map(\.voiceShortcutId)) == [first, second])
            let conflicts = try await admin.voiceShortcuts(account: phone.account, conflictsOnly: true)
            #expect(conflicts.voiceShortcuts.map(\.voiceShortcutId) == [second])
            #expect(conflicts.voiceShortcuts.first?.conflictsWith == first)
            #expect(conflicts.text.contains("phraseConflict") && conflicts.text.contains(first.uuidString.lowercased()))
        }
    }

    @Test func eventsAreListedByDeviceTypeAndVersion() async throws {
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
            #expect(all.map(\.version) == [1, 2, 3, 4])
            #expect(all.map(\.position) == all.map(\.position).sorted())
            let macs = try await admin.events(EventFilter(account: phone.account, device: mac.deviceId), limit: 100).events
            #expect(macs.allSatisfy { $0.deviceId == mac.deviceId } && macs.map(\.version) == [3, 4])
            let deletions = try await admin.events(EventFilter(account: phone.account, type: .deletion), limit: 100).events
            #expect(deletions.map(\.event.type) == [.deletion] && deletions.map(\.version) == [2])
            let later = try await admin.events(EventFilter(account: phone.account, afterVersion: 2), limit: 1)
            #expect(later.events.map(\.version) == [3])
            // A page says when more follow and how to ask for them (DESIGN §7).
            #expect(later.more && later.nextAfter == 3)
            #expect(later.text.hasSuffix("more events follow: --after 3\n"))
            #expect(!listed.more && listed.nextAfter == nil && !listed.text.contains("more events follow"))
            let last = try await admin.events(EventFilter(account: phone.account, afterVersion: 3), limit: 1)
            #expect(last.events.map(\.version) == [4] && !last.more)
            // An event of another account never shows, whatever its position.
            var stranger = DeviceScript()
            try await register([stranger], client: client)
            try await log.push(stranger, [stranger.donate("kale", at: 140)])
            #expect(try await admin.events(EventFilter(account: phone.account, afterVersion: 4), limit: 10).events.isEmpty)
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

    /// `projections status` shows the accounts behind their head (an import not folded yet) and
    /// by how many events, the parked accounts with the version their fold failed at, the epoch,
    /// and what the rebuild tables hold; once the maintenance folded them, nothing is behind.
    @Test func statusShowsTheAccountsBehindAndParkedAndTheEpoch() async throws {
        try await TestDatabase.withClient { client, url in
            var phone = DeviceScript()
            var imported = DeviceScript()
            try await register([phone, imported], client: client)
            var log = PushLog(client: client)
            try await log.push(phone, [phone.donate("tomato", at: 100)])
            let admin = Operator(client: client, logger: logger)
            let store = ProjectionStore(client: client, logger: logger)

            let current = try await admin.status()
            #expect(current.accountsBehind == 0 && current.eventsBehind == 0 && current.parkedAccounts == 0)
            #expect(current.rebuild == nil)
            #expect(current.text.contains("accounts behind  0") && current.text.contains("rebuild tables   empty"))

            try await writeBacklog([imported.donate("leek", at: 100), imported.donate("kale", at: 110)], account: imported.account, client: client)
            try await withConnection(url) { connection in
                try await connection.inTransaction(logger: logger) { connection in
                    try await ProjectionRowStore(tables: .live, logger: logger)
                        .park(phone.account, version: 1, error: "a defect in the fold", on: connection)
                }
            }
            let behind = try await admin.status()
            #expect(behind.accountsBehind == 1 && behind.eventsBehind == 2 && behind.oldestWaitSeconds >= 0)
            #expect(behind.parkedAccounts == 1 && behind.parked.map(\.accountId) == [phone.account])
            #expect(behind.parked.first?.failedVersion == 1)
            #expect(behind.epoch == current.epoch)
            #expect(behind.text.contains("accounts behind  1") && behind.text.contains("events behind    2"))
            #expect(behind.text.contains(phone.account.uuidString.lowercased()) && behind.text.contains("a defect in the fold"))

            #expect(try await store.foldAll() == 1)
            let folded = try await admin.status()
            #expect(folded.accountsBehind == 0 && folded.eventsBehind == 0)

            _ = try await admin.rebuild { _, _ in }
            let rebuilt = try await admin.status()
            #expect(rebuilt.epoch == current.epoch + 1 && rebuilt.parkedAccounts == 0)
            #expect(rebuilt.rebuild?.accountsRebuilt == 2 && rebuilt.rebuild?.accountsWithEvents == 2)
            #expect(rebuilt.text.contains("rebuild tables   2 of 2 accounts with events"))
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

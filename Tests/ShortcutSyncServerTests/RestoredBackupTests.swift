import Foundation
import OpenAPIAsyncHTTPClient
import PostgresNIO
import ShortcutSyncAPI
import ShortcutSyncClient
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import Testing

/// An operator restores a backup after losing the database (issue 64, item 2; docs/operating.md,
/// "Restoring a backup"): `pg_dump`, more changes, the database dropped and `pg_restore`d. A
/// cursor of the lost timeline is never the base of a diff (DESIGN §5), and the devices give
/// back what the database lost (docs/client-library.md).
@Suite struct RestoredBackupTests {
    static let logger = TestDatabase.shared.logger

    /// Runs `body` with a service over `url`'s database and a pool on it, both stopped afterwards.
    static func serving(_ url: DatabaseURL, _ body: (TestServer) async throws -> Void) async throws {
        let sql = PostgresClient(configuration: try url.clientConfiguration(maximumConnections: 2), backgroundLogger: logger)
        try await sql.withRunning {
            try await TestServer.with(database: url, sql: sql) { server in try await body(server) }
        }
    }

    /// The account's whole log, in version order.
    static func log(_ server: TestServer, account: UUID) async throws -> [RecordedEvent] {
        try await PostgresEventStore(client: server.sql, logger: logger).readStream(account: account, after: 0, limit: 100_000)
    }

    /// `admin verify`'s check: the projections rebuilt from the log equal the live ones.
    static func expectVerifyClean(_ server: TestServer, _ when: String) async throws {
        let verification = try await ProjectionRebuilder(client: server.sql, logger: logger).verify()
        #expect(verification.differences.isEmpty, "verify \(when): \(verification.differences)")
        #expect(verification.accountsBehind == 0, "verify \(when)")
    }

    static func soup(_ identifier: String) -> EventBody {
        .donation(Donation(bundleId: "com.example.soup", identifier: identifier, kind: .intent, intentType: "OrderSoupIntent",
                           title: "\(identifier.capitalized) soup"))
    }

    /// A device as it was before the service restarted, talking to the new one (same id, token,
    /// seqs, clock, view and cursor).
    static func reconnected(_ device: SimulatedDevice, to server: TestServer) -> SimulatedDevice {
        let again = SimulatedDevice(id: device.id, token: device.token, client: server.client(token: device.token))
        again.seq = device.seq
        again.clock = device.clock
        again.view = device.view
        again.cursor = device.cursor
        return again
    }

    /// A cursor taken after the backup: the restored account moves past its version with other
    /// events, and the cursor is answered with the whole view (`reset: true`), not a diff against
    /// versions that now mean other events. A cursor at a version the backup holds still gets
    /// its diff, and it is right.
    @Test func aCursorOfTheLostTimelineIsAnsweredWithTheWholeView() async throws {
        let url = try await TestDatabase.shared.freshDatabase()
        var account = UUID()
        var writer: SimulatedDevice!, reader: SimulatedDevice!
        var backup: DatabaseBackup!
        var cursorInBackup: String?, viewInBackup = DeviceView.empty
        var lostCursor: String?
        let millis = Int64(Date().timeIntervalSince1970 * 1000)
        try await Self.serving(url) { server in
            let created = try await server.createAccount()
            account = created.id
            writer = try await server.createDevice(accountToken: created.token)
            reader = try await server.createDevice(accountToken: created.token, name: "iPad", platform: .iPadOS)
            writer.record(Self.soup("tomato"), at: millis)
            writer.record(Self.soup("leek"), at: millis + 1)
            try await writer.push()
            try await reader.pull()
            cursorInBackup = reader.cursor
            viewInBackup = reader.view
            backup = try await DatabaseBackup.dump(url)

            // After the backup: versions 3 and 4, which the restore loses.
            writer.record(Self.soup("kale"), at: millis + 2)
            writer.record(.deletion(Deletion(bundleId: "com.example.soup", selector: .identifiers(["tomato"]))), at: millis + 3)
            #expect(try await writer.push() == 4)
            try await reader.pull()
            lostCursor = reader.cursor
            #expect(reader.view.shortcuts.keys.map(\.identifier).sorted() == ["kale", "leek"])
        }

        try await backup.restore(into: url)

        try await Self.serving(url) { server in
            try await Self.expectVerifyClean(server, "after the restore")
            // The writer goes on from what the restored database holds of it (seq 2), with
            // other events: versions 3, 4 and 5 now mean them.
            let writer = Self.reconnected(writer, to: server)
            writer.seq = 2
            writer.record(Self.soup("pea"), at: millis + 10)
            writer.record(Self.soup("corn"), at: millis + 11)
            writer.record(Self.soup("bean"), at: millis + 12)
            #expect(try await writer.push() == 5)
            let expected = AccountState(folding: try await Self.log(server, account: account).map(\.accepted)).view(forDevice: reader.id)
            #expect(expected.shortcuts.keys.map(\.identifier).sorted() == ["bean", "corn", "leek", "pea", "tomato"])

            // The lost timeline's cursor, at version 4, which the account is past.
            let lost = try await server.client(token: reader.token).pull(query: .init(cursor: lostCursor)).ok.body.json
            #expect(lost.reset, "a cursor of the lost timeline is never the base of a diff")
            #expect(DeviceView.empty.applying(PullAnswer(lost).changes) == expected)

            // A cursor at version 2, which the backup holds: a diff, and applied it is the view.
            let kept = try await server.client(token: reader.token).pull(query: .init(cursor: cursorInBackup)).ok.body.json
            #expect(!kept.reset, "a cursor of the history the restore kept goes on")
            #expect(viewInBackup.applying(PullAnswer(kept).changes) == expected)

            // And the new cursor goes on with diffs from here.
            let reader = Self.reconnected(reader, to: server)
            reader.cursor = lost.cursor
            reader.view = expected
            writer.record(Self.soup("rice"), at: millis + 13)
            try await writer.push()
            let next = try await reader.pull()
            #expect(!next.reset)
            #expect(reader.view.shortcuts.keys.map(\.identifier).sorted() == ["bean", "corn", "leek", "pea", "rice", "tomato"])
            try await Self.expectVerifyClean(server, "after the pushes past the restore")
        }
    }

    /// Each pushes' history value is the head's and its events' (migration 0027), new at each
    /// push: what a pull compares a cursor's with.
    @Test func everyPushDrawsTheHistoryOfTheVersionsItAssigns() async throws {
        let url = try await TestDatabase.shared.freshDatabase()
        try await Self.serving(url) { server in
            let created = try await server.createAccount()
            let device = try await server.createDevice(accountToken: created.token)
            let millis = Int64(Date().timeIntervalSince1970 * 1000)
            device.record(Self.soup("tomato"), at: millis)
            device.record(Self.soup("leek"), at: millis + 1)
            try await device.push()
            device.record(Self.soup("kale"), at: millis + 2)
            try await device.push()
            let events = try await server.sql.query("SELECT version, history FROM events WHERE account_id = \(created.id) ORDER BY version")
                .decode((Int64, Int64?).self).collectAll()
            let head = try await server.sql.query("SELECT history FROM account_heads WHERE account_id = \(created.id)")
                .decode(Int64.self).collectAll()
            #expect(events.count == 3)
            #expect(events[0].1 != nil && events[0].1 == events[1].1, "one value for a push's events")
            #expect(events[2].1 != nil && events[2].1 != events[0].1, "a new value for each push")
            #expect(head == [events[2].1!], "the head holds its version's value")
        }
    }

    /// Three devices on the client library, and a fourth signed in after the backup. The
    /// database is restored from a backup taken before their last changes (acknowledged, every
    /// one): the devices give back what it lost, a device whose cursor is of the lost timeline
    /// gets the whole view, the fourth, unknown to the restored database, signs in again and
    /// gives back its changes too; every view ends as the fold of every change any device ever
    /// made, and `admin verify` is clean throughout.
    @Test func devicesGiveBackWhatARestoredDatabaseLost() async throws {
        let url = try await TestDatabase.shared.freshDatabase()
        let storages = (0..<4).map { _ in ClientLibraryTests.storage() }
        defer { for storage in storages { try? FileManager.default.removeItem(atPath: storage) } }
        var accountToken = ""
        var account = UUID()
        var ids: [UUID] = []
        var tokens: [String] = []
        var backup: DatabaseBackup!
        var everyChange: Set<AcceptedEvent> = []
        var lostVersion: Int64 = 0

        // 1. Before the backup, and after it.
        try await Self.serving(url) { server in
            let created = try await server.createAccount()
            (account, accountToken) = (created.id, created.token)
            for (name, platform) in [("iPhone", Components.Schemas.Platform.iOS), ("iPad", .iPadOS), ("Mac", .macOS)] {
                let device = try await server.createDevice(accountToken: accountToken, name: name, platform: platform)
                ids.append(device.id)
                tokens.append(device.token)
            }
            let (phone, pad, mac) = (try ClientLibraryTests.client(server, token: tokens[0], storage: storages[0]),
                                     try ClientLibraryTests.client(server, token: tokens[1], storage: storages[1]),
                                     try ClientLibraryTests.client(server, token: tokens[2], storage: storages[2]))
            try await phone.donate(ClientLibraryTests.soup("tomato"))
            try await phone.donate(ClientLibraryTests.soup("leek"))
            try await pad.donate(ClientLibraryTests.soup("kale"))
            try await mac.donate(ClientLibraryTests.soup("pea"))
            for client in [phone, pad, mac] { try await client.sync() }
            try await Self.expectVerifyClean(server, "before the backup")

            backup = try await DatabaseBackup.dump(url)

            // After the backup, acknowledged: the restore loses these.
            let tomato = try #require(await phone.shortcuts().first { $0.identifier == "tomato" })
            try await phone.addVoiceShortcut(phrase: "Soup time", for: tomato)
            try await phone.donate(ClientLibraryTests.soup("tomato"))
            try await pad.deleteDonations(withIdentifiers: ["leek"])
            try await pad.donate(ClientLibraryTests.soup("corn"))
            try await mac.donate(ClientLibraryTests.soup("bean"))
            // A fourth device, signed in after the backup: the restored database will not know it.
            let watch = try await server.createDevice(accountToken: accountToken, name: "Watch", platform: .watchOS)
            ids.append(watch.id)
            tokens.append(watch.token)
            let watchClient = try ClientLibraryTests.client(server, token: watch.token, storage: storages[3])
            try await watchClient.donate(ClientLibraryTests.soup("rice"))
            try await watchClient.donate(ClientLibraryTests.soup("tomato"))
            // Everyone acknowledged, the Mac last: its cursor is at the account's version.
            for client in [phone, pad, watchClient, mac] { try await client.sync() }
            for client in [phone, pad, mac, watchClient] { #expect(try await client.pendingCount() == 0) }

            let log = try await Self.log(server, account: account)
            everyChange = Set(log.map(\.accepted))
            lostVersion = log.last!.version
            #expect(await mac.currentView == AccountState(folding: log.map(\.accepted)).view(forDevice: ids[2]))
            #expect(try await mac.keptChanges().events == 2, "the Mac keeps both its acknowledged changes")
            try await Self.expectVerifyClean(server, "after the backup")
        }

        // 2. The database is lost and restored from the backup.
        try await backup.restore(into: url)

        try await Self.serving(url) { server in
            try await Self.expectVerifyClean(server, "after the restore")
            let restored = try await Self.log(server, account: account)
            #expect(restored.count < everyChange.count, "the restore lost changes")
            // The apps open again (same files, same tokens) on the restored service.
            let phone = try ClientLibraryTests.client(server, token: tokens[0], storage: storages[0])
            let pad = try ClientLibraryTests.client(server, token: tokens[1], storage: storages[1])
            let resets = ResetWatcher(OpenAPISyncTransport(serverURL: server.baseURL, deviceToken: tokens[2], transport: AsyncHTTPClientTransport()))
            var macSettings = ShortcutSyncClient.Configuration(bundleId: "com.example.soup", storagePath: storages[2])
            macSettings.initialBackoff = .milliseconds(20)
            let mac = try ShortcutSyncClient(configuration: macSettings, transport: resets, logger: Self.logger)
            let watch = try ClientLibraryTests.client(server, token: tokens[3], storage: storages[3])

            // The iPad made two more changes while the service was away.
            let madeAfter: Set<UUID> = [try await pad.donate(ClientLibraryTests.soup("miso")),
                                        try await pad.donate(ClientLibraryTests.soup("kale"))]
            #expect(try await pad.pendingCount() == 2)

            // The iPhone has nothing waiting: its pull shows the service lost what it had
            // acknowledged, and it gives it back. The iPad's push gets 409 with an expectedSeq
            // below what it had acknowledged: it gives back, before what waits.
            try await phone.sync()
            try await pad.sync()

            // The Watch is unknown to the restored database: its app is told to sign in again.
            await #expect(throws: SignInRequired.self) { try await watch.sync() }
            #expect(try await watch.signInRequired())
            let again = try await server.createDevice(accountToken: accountToken, name: "Watch", platform: .watchOS)
            let resent = try await watch.signIn(transport: OpenAPISyncTransport(serverURL: server.baseURL, deviceToken: again.token,
                                                                               transport: AsyncHTTPClientTransport()))
            #expect(resent == 2)
            #expect(try await !watch.signInRequired())
            try await watch.sync()

            // The account is now past the Mac's cursor, with other events at its versions.
            let head = try await server.sql.query("SELECT version FROM account_heads WHERE account_id = \(account)").decode(Int64.self).collectAll()
            #expect(head.first! > lostVersion, "the restored account moved past the lost timeline's cursor")
            try await mac.sync()
            #expect(resets.sawReset, "the Mac's cursor of the lost timeline got the whole view")

            for client in [phone, pad, mac, watch] { try await client.sync() }
            let log = try await Self.log(server, account: account)
            let expected = AccountState(folding: log.map(\.accepted))
            // Every change any device ever made is in the log, as it was made (id, clock, body),
            // once each; and nothing else but the iPad's two made since.
            let events = log.map(\.accepted.event)
            #expect(Set(events.map(\.id)).count == events.count)
            func made(_ event: Event) -> Event { var event = event; event.seq = 0; return event }
            #expect(Set(everyChange.map { made($0.event) }).isSubset(of: Set(events.map(made))), "every change ever made is stored again")
            #expect(Set(events.map(\.id)).subtracting(everyChange.map(\.event.id)) == madeAfter)
            // The three devices the restore knew gave theirs back exactly as they were (seqs too);
            // the Watch's came back as the new device's, seqs 1 and 2.
            #expect(everyChange.filter { ids[0...2].contains($0.deviceId) }.isSubset(of: Set(log.map(\.accepted))))
            #expect(log.filter { $0.accepted.deviceId == again.id }.map(\.accepted.event.seq) == [1, 2])
            #expect(Set(log.filter { $0.accepted.deviceId == again.id }.map { made($0.accepted.event) })
                    == Set(everyChange.filter { $0.deviceId == ids[3] }.map { made($0.event) }))
            // Every view is that fold, the same on every device.
            for (client, device) in [(phone, ids[0]), (pad, ids[1]), (mac, ids[2]), (watch, again.id)] {
                #expect(await client.currentView == expected.view(forDevice: device))
                #expect(try await client.pendingCount() == 0)
            }
            #expect(await phone.currentView == watch.currentView)
            #expect(await phone.shortcuts().map(\.identifier) == ["bean", "corn", "kale", "miso", "pea", "rice", "tomato"])
            #expect(await phone.voiceShortcuts().map(\.phrase) == ["Soup time"])
            try await Self.expectVerifyClean(server, "after the devices came back")
        }
    }
}

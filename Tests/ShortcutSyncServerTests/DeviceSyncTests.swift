import Foundation
import NIOHTTP1
import PostgresNIO
import ShortcutSyncAPI
import ShortcutSyncClient
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

/// "Did my iPad get it?" (issue 33): each device of the account with the version it has and when
/// (`GET /v1/devices`), and the client library's `pendingCount` and `confirmed(_:on:)`.
@Suite struct DeviceSyncTests {
    @Test func aChangeIsConfirmedOnADeviceOnceThatDevicePulledIt() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phoneDevice = try await server.createDevice(accountToken: account.token, name: "iPhone", platform: .iOS)
            let padDevice = try await server.createDevice(accountToken: account.token, name: "iPad", platform: .iPadOS)
            let (phoneStorage, padStorage) = (ClientLibraryTests.storage(), ClientLibraryTests.storage())
            defer { for path in [phoneStorage, padStorage] { try? FileManager.default.removeItem(atPath: path) } }
            let phone = try ClientLibraryTests.client(server, token: phoneDevice.token, storage: phoneStorage)
            let pad = try ClientLibraryTests.client(server, token: padDevice.token, storage: padStorage)

            let change = try await phone.donate(ClientLibraryTests.soup("tomato"))
            #expect(try await phone.pendingCount() == 1)
            #expect(try await phone.confirmed(change, on: padDevice.id) == false, "still in the phone's outbox")
            try await phone.sync()
            #expect(try await phone.pendingCount() == 0)
            #expect(try await phone.confirmed(change, on: phoneDevice.id), "the phone pulled after its push")
            #expect(try await phone.confirmed(change, on: padDevice.id) == false, "stored, but the iPad has not pulled")

            let before = Date()
            try await pad.sync()
            #expect(try await phone.confirmed(change, on: padDevice.id))
            let answer = try await phone.devices()
            #expect(answer.devices.map(\.name) == ["iPhone", "iPad"])
            #expect(answer.devices.map(\.platform) == ["iOS", "iPadOS"])
            let iPad = try #require(answer.devices.last)
            #expect(iPad.syncedVersion == answer.version && answer.version == 1)
            #expect(try #require(iPad.syncedAt) >= before.addingTimeInterval(-1), "when the iPad pulled")

            // A change this device never made is not answered as if it had.
            await #expect(throws: (any Error).self) { try await phone.confirmed(UUID(), on: padDevice.id) }
        }
    }

    /// The list is the account's own signed-in devices, for its token and its devices' tokens,
    /// and never shows a token; a device that never pulled has version 0 and no time.
    @Test func theListShowsTheAccountsSignedInDevicesAndNoToken() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token, name: "iPhone", platform: .iOS)
            let watch = try await server.createDevice(accountToken: account.token, name: "Watch", platform: .watchOS)
            let other = try await server.createAccount()
            _ = try await server.createDevice(accountToken: other.token, name: "Elsewhere", platform: .macOS)
            #expect(try await server.raw(.DELETE, "/v1/devices/\(watch.id)", token: account.token).status == 204)

            for token in [account.token, phone.token] {
                let answer = try await server.raw(.GET, "/v1/devices", token: token)
                #expect(answer.status == 200)
                let devices = answer.json["devices"] as? [[String: Any]] ?? []
                #expect(devices.map { $0["deviceId"] as? String } == [phone.id.uuidString])
                #expect(devices.first?["syncedVersion"] as? Int == 0)
                #expect(devices.first?["syncedAt"] == nil)
                #expect(Set(devices.first?.keys.map { $0 } ?? []) == ["deviceId", "name", "platform", "syncedVersion", "learning"], "names and kinds, never a token")
                #expect(devices.first?["learning"] as? String == "on")
            }
            #expect(try await server.raw(.GET, "/v1/devices", token: nil).status == 401)
            #expect(try await server.raw(.GET, "/v1/devices", token: server.adminToken).status == 401)
        }
    }

    /// A pull writes what the device has when its version moves on; pulled again at once with
    /// nothing new, it writes nothing (at most once a minute), and a page that is not the last
    /// records nothing.
    @Test func aPullRecordsTheVersionOnlyWhenItMovesOnOrAMinuteLater() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = DeviceSyncStore(client: client, logger: TestDatabase.shared.logger)
            let signedIn = DeviceScript(account: UUID())
            try await register([signedIn], client: client)
            let (account, device) = (signedIn.account, signedIn.deviceId)
            func row() async throws -> [(Int64, Date)] {
                try await client.query("SELECT synced_version, synced_at FROM device_sync WHERE account_id = \(account) AND device_id = \(device)")
                    .decode((Int64, Date).self).collectAll()
            }
            try await store.recordPull(device: UUID(), account: account, version: 3, complete: true)
            #expect(try await client.query("SELECT count(*) FROM device_sync WHERE account_id = \(account)").decode(Int64.self).collectAll() == [0],
                    "a device the account does not have: nothing")
            try await client.query("DELETE FROM account_heads WHERE account_id = \(account)")
            try await store.recordPull(device: device, account: account, version: 3, complete: true)
            #expect(try await row().isEmpty, "an account with no head (erased): nothing")
            try await client.query("INSERT INTO account_heads (account_id) VALUES (\(account))")
            try await store.recordPull(device: device, account: account, version: 3, complete: false)
            #expect(try await row().isEmpty, "a page that is not the last")
            try await store.recordPull(device: device, account: account, version: 3, complete: true)
            let first = try #require(try await row().first)
            #expect(first.0 == 3)
            try await store.recordPull(device: device, account: account, version: 3, complete: true)
            #expect(try await row().first?.1 == first.1, "nothing new, within the minute: no write")
            try await store.recordPull(device: device, account: account, version: 2, complete: true)
            #expect(try await row().first?.0 == 3, "never backwards")
            try await client.query("UPDATE device_sync SET synced_at = synced_at - interval '2 minutes' WHERE account_id = \(account)")
            try await store.recordPull(device: device, account: account, version: 3, complete: true)
            #expect(try #require(try await row().first).1 > first.1.addingTimeInterval(-60), "a minute on: the time is written again")
            try await store.recordPull(device: device, account: account, version: 5, complete: true)
            #expect(try await row().first?.0 == 5)
        }
    }

    /// A pull that checked its token before its device was signed out, and records what it pulled
    /// while the sign-out is under way, writes nothing: the signed-out device's row, which the
    /// sign-out removed, does not come back (it did, and outlived the device). The sign-out is
    /// `AccountStore.revokeDevice`'s own, held after it locked the head: its statement waits for
    /// the test's lock of the device's push token.
    @Test func aPullRecordedWhileItsDeviceIsSignedOutWritesNothing() async throws {
        try await TestDatabase.withClient { client, url in
            let logger = TestDatabase.shared.logger
            let store = DeviceSyncStore(client: client, logger: logger)
            let signedIn = DeviceScript(account: UUID())
            try await register([signedIn], client: client)
            let (account, device) = (signedIn.account, signedIn.deviceId)
            #expect(try await PushTokenStore(client: client, logger: logger).register(
                PushTokenRegistration(token: String(repeating: "ab", count: 32), topic: "com.example.a", environment: "production"),
                device: device, account: account))
            try await client.query("UPDATE account_heads SET version = 4, folded_version = 4 WHERE account_id = \(account)")
            try await store.recordPull(device: device, account: account, version: 3, complete: true)
            #expect(try await DeviceChangeBudgetTests.syncRows(of: device, client) == 1)

            try await withConnection(url) { holder in
                try await holder.query("BEGIN", logger: logger)
                try await holder.query("SELECT 1 FROM push_tokens WHERE device_id = \(device) FOR UPDATE", logger: logger)
                let signedOut = Task { try await AccountStore(client: client, logger: logger).revokeDevice(device, account: account) }
                try await eventually("the sign-out waits for the push token's lock") { try await sessionsWaitingForALock(client) == 1 }
                let recorded = Task { try await store.recordPull(device: device, account: account, version: 4, complete: true) }
                try await eventually("the record waits for the head") { try await sessionsWaitingForALock(client) == 2 }
                try await holder.query("COMMIT", logger: logger)
                #expect(try await signedOut.value)
                try await recorded.value
            }
            #expect(try await DeviceChangeBudgetTests.syncRows(of: device, client) == 0, "the signed-out device's row came back")
            try await store.recordPull(device: device, account: account, version: 5, complete: true)
            #expect(try await DeviceChangeBudgetTests.syncRows(of: device, client) == 0, "a record after the sign-out")
        }
    }
}

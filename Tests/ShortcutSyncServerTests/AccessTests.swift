import Foundation
import NIOHTTP1
import ShortcutSyncAPI
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import Testing

/// An account's tokens never reach another account's data.
@Suite struct AccessTests {
    @Test func aDeviceOfOneAccountNeverSeesNorTouchesAnotherAccount() async throws {
        try await TestServer.with { server in
            let alice = try await server.createAccount()
            let bob = try await server.createAccount()
            let alicePhone = try await server.createDevice(accountToken: alice.token)
            let bobPhone = try await server.createDevice(accountToken: bob.token)
            let now = Int64(Date().timeIntervalSince1970 * 1000)

            bobPhone.record(EndToEndTests.donation("secret"), at: now)
            let version = try await bobPhone.push()
            let answer = try await alicePhone.pull(waitFor: version)
            #expect(answer.shortcuts.upserted.isEmpty)
            #expect(answer.voiceShortcuts.upserted.isEmpty)
            try await bobPhone.pull(waitFor: version)
            #expect(bobPhone.view.shortcuts.count == 1)

            // Alice's account token cannot sign out Bob's device, and is told it does not exist.
            let attempt = try await server.raw(.DELETE, "/v1/devices/\(bobPhone.id)", token: alice.token)
            #expect(attempt.status == 404)
            // Bob's device still works, and nothing of Alice's reached it.
            let unchanged = try await bobPhone.pull()
            #expect(unchanged.shortcuts.upserted.isEmpty && unchanged.shortcuts.removed.isEmpty)
            #expect(try await bobPhone.pull(fresh: true).shortcuts.upserted.count == 1)
        }
    }

    @Test func tokensOfTheWrongKindOrUnknownAreRefused() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            #expect(try await server.raw(.POST, "/v1/accounts", token: account.token).status == 401)
            #expect(try await server.raw(.POST, "/v1/accounts", token: nil).status == 401)
            #expect(try await server.raw(.POST, "/v1/devices", token: device.token, body: Array(#"{"name":"x","platform":"iOS"}"#.utf8)).status == 401)
            #expect(try await server.raw(.GET, "/v1/sync/pull", token: account.token).status == 401)
            #expect(try await server.raw(.GET, "/v1/sync/pull", token: "ssd_" + String(repeating: "A", count: 43)).status == 401)
            #expect(try await server.raw(.GET, "/v1/sync/pull", token: device.token).status == 200)
        }
    }

    @Test func aSignedOutDeviceIsRefusedAndItsEventsStay() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let mac = try await server.createDevice(accountToken: account.token, name: "Mac", platform: .macOS)
            phone.record(EndToEndTests.donation("tomato"), at: Int64(Date().timeIntervalSince1970 * 1000))
            let version = try await phone.push()

            #expect(try await server.raw(.DELETE, "/v1/devices/\(phone.id)", token: account.token).status == 204)
            #expect(try await server.raw(.GET, "/v1/sync/pull", token: phone.token).status == 401)
            #expect(try await server.raw(.POST, "/v1/sync/push", token: phone.token, body: Array(#"{"events":[]}"#.utf8)).status == 401)
            #expect(try await eventCount(server.sql) == 2, "its donation stays, and its sign-out follows it")
            #expect(try await mac.pull(waitFor: version).shortcuts.upserted.count == 1)
            #expect(try await server.raw(.DELETE, "/v1/devices/not-a-uuid", token: account.token).status == 404)
        }
    }
}

import Foundation
import NIOHTTP1
import PostgresNIO
import ShortcutSyncApp
import ShortcutSyncServer
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Synchronization
import Testing

/// Signing devices in and out has a budget per account (issue 56): every sign-out is announced to
/// every server and leaves its device's row and event behind, so a loop of them must meet a
/// `429` with `Retry-After`, storing and announcing nothing, while other accounts sign in as
/// ever. (The budget's clock stands still until the test moves it, so that a slow machine cannot
/// refill it during the test.)
@Suite struct DeviceChangeBudgetTests {
    /// One sign-in (and one sign-out) each 10 s over time, three at once.
    static func configure(_ configuration: inout ServeConfiguration) {
        configuration.server.deviceSignInsPerHour = 360
        configuration.server.deviceSignInBurst = 3
    }

    static let signIn = Array(#"{"name":"iPad","platform":"iPadOS"}"#.utf8)

    @Test func aSignInPastTheAccountsBudgetIs429AndStoresNothingUntilItRefills() async throws {
        let start = ContinuousClock.now, elapsed = Mutex(Duration.zero)
        try await TestServer.with(monotonic: { start + elapsed.withLock { $0 } }, configure: Self.configure) { server in
            let account = try await server.createAccount()
            for _ in 0..<3 { #expect(try await server.raw(.POST, "/v1/devices", token: account.token, body: Self.signIn).status == 201) }
            let refused = try await server.request(.POST, "/v1/devices", token: account.token, body: Self.signIn)
            #expect(refused.status == 429, "\(refused.json)")
            #expect(refused.headers.first(name: "Retry-After") == "10", "one sign-in each 10 s: \(refused.headers)")
            #expect(refused.headers.first(name: "Content-Type") == "application/problem+json")
            #expect((refused.json["detail"] as? String)?.contains("signs in") == true, "\(refused.json)")
            #expect(try await Self.devices(of: account.id, server.sql) == 3, "the refused sign-in stored nothing")
            let other = try await server.createAccount()
            #expect(try await server.raw(.POST, "/v1/devices", token: other.token, body: Self.signIn).status == 201, "another account has its own")

            elapsed.withLock { $0 = .seconds(5) }
            #expect(try await server.raw(.POST, "/v1/devices", token: account.token, body: Self.signIn).status == 429, "not before the wait told")
            elapsed.withLock { $0 = .seconds(10) }
            #expect(try await server.raw(.POST, "/v1/devices", token: account.token, body: Self.signIn).status == 201, "refilled")
            #expect(try await server.raw(.POST, "/v1/devices", token: account.token, body: Self.signIn).status == 429, "one more, no more")
            #expect(try await Self.devices(of: account.id, server.sql) == 4)
        }
    }

    @Test func aSignOutPastTheAccountsBudgetIs429AndSignsNothingOutUntilItRefills() async throws {
        let start = ContinuousClock.now, elapsed = Mutex(Duration.zero)
        try await TestServer.with(monotonic: { start + elapsed.withLock { $0 } }, configure: Self.configure) { server in
            let account = try await server.createAccount()
            var devices: [SimulatedDevice] = []
            for _ in 0..<3 { devices.append(try await server.createDevice(accountToken: account.token)) }
            elapsed.withLock { $0 = .seconds(10) }
            devices.append(try await server.createDevice(accountToken: account.token))
            // Sign-outs have a budget apart from sign-ins': the sign-ins above took none of it.
            for device in devices.prefix(3) {
                #expect(try await server.raw(.DELETE, "/v1/devices/\(device.id.uuidString)", token: account.token).status == 204)
            }
            let last = devices[3]
            let refused = try await server.request(.DELETE, "/v1/devices/\(last.id.uuidString)", token: account.token)
            #expect(refused.status == 429, "\(refused.json)")
            #expect(refused.headers.first(name: "Retry-After") == "10", "\(refused.headers)")
            #expect((refused.json["detail"] as? String)?.contains("signs out") == true, "\(refused.json)")
            #expect(try await server.raw(.GET, "/v1/sync/pull", token: last.token).status == 200, "still signed in")
            #expect(try await Self.syncRows(of: last.id, server.sql) == 1, "its pull recorded what it has")
            #expect(try await Self.signedOutEvents(of: account.id, server.sql) == 3, "no sign-out event for the refused one")
            #expect(try await server.raw(.DELETE, "/v1/devices/\(UUID().uuidString)", token: account.token).status == 404,
                    "a device the account does not have is not found, and spends nothing (issue 65, item 10)")

            elapsed.withLock { $0 = .seconds(20) }
            #expect(try await server.raw(.DELETE, "/v1/devices/\(last.id.uuidString)", token: account.token).status == 204, "refilled")
            #expect(try await server.raw(.GET, "/v1/sync/pull", token: last.token).status == 401)
            #expect(try await Self.syncRows(of: last.id, server.sql) == 0, "what it last pulled goes with it")
            #expect(try await Self.signedOutEvents(of: account.id, server.sql) == 4)
        }
    }

    /// Issue 65, item 10: sign-outs of devices the account does not have (made-up ids, another
    /// account's) are 404 and spend none of the budget that signs a real intruder out.
    @Test func aSignOutOfADeviceTheAccountDoesNotHaveSpendsNoBudget() async throws {
        let start = ContinuousClock.now
        try await TestServer.with(monotonic: { start }, configure: Self.configure) { server in
            let account = try await server.createAccount(), other = try await server.createAccount()
            let intruder = try await server.createDevice(accountToken: account.token)
            let others = try await server.createDevice(accountToken: other.token)
            for _ in 0..<30 {
                #expect(try await server.raw(.DELETE, "/v1/devices/\(UUID().uuidString)", token: account.token).status == 404)
            }
            #expect(try await server.raw(.DELETE, "/v1/devices/\(others.id.uuidString)", token: account.token).status == 404)
            #expect(try await server.raw(.DELETE, "/v1/devices/\(intruder.id.uuidString)", token: account.token).status == 204)
            #expect(try await server.raw(.DELETE, "/v1/devices/\(intruder.id.uuidString)", token: account.token).status == 204,
                    "signed out already: still the account's, and it is charged")
            #expect(try await server.raw(.GET, "/v1/sync/pull", token: others.token).status == 200, "the other account's device is signed in")
        }
    }

    static func devices(of account: UUID, _ sql: PostgresClient) async throws -> Int {
        try await sql.query("SELECT count(*)::int8 FROM devices WHERE account_id = \(account)")
            .decode(Int64.self).collectAll().first.map(Int.init) ?? -1
    }

    static func syncRows(of device: UUID, _ sql: PostgresClient) async throws -> Int {
        try await sql.query("SELECT count(*)::int8 FROM device_sync WHERE device_id = \(device)")
            .decode(Int64.self).collectAll().first.map(Int.init) ?? -1
    }

    static func signedOutEvents(of account: UUID, _ sql: PostgresClient) async throws -> Int {
        try await sql.query("SELECT count(*)::int8 FROM events WHERE account_id = \(account) AND type = 'deviceSignedOut'")
            .decode(Int64.self).collectAll().first.map(Int.init) ?? -1
    }
}

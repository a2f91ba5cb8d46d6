import AsyncHTTPClient
import Foundation
import NIOHTTP1
import PostgresNIO
import ShortcutSyncAPI
import ShortcutSyncChildProcess
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

/// A leaked account token (issue 56, item 4): rotating it is not enough when someone signed a
/// device in with it. `admin rotate-token --sign-out-devices` takes the devices with the token, in
/// one transaction; `admin devices` says which token signed each device in, and
/// `admin sign-out --signed-in-with N` signs out just the devices of token N.
@Suite struct LeakedAccountTokenTests {
    static let pad = Array(#"{"name":"Stranger's iPad","platform":"iPadOS"}"#.utf8)

    /// Runs `shortcut-sync admin …` on the server's database; its standard output.
    static func admin(_ server: TestServer, _ arguments: [String]) async throws -> String {
        let command = try await CommandProcess.run(["admin"] + arguments, environment: ["DATABASE_URL": server.database.urlString])
        defer { command.forceStop() }
        #expect(command.exitStatus == 0, "admin \(arguments.joined(separator: " ")): \(command.errorOutput)")
        return command.output
    }

    /// The types of the device's events, in log order.
    static func eventTypes(of device: UUID, _ sql: PostgresClient) async throws -> [String] {
        try await sql.query("SELECT type FROM events WHERE device_id = \(device) ORDER BY version").decode(String.self).collectAll()
    }

    @Test func rotatingWithSignOutDevicesTakesTheLeakedTokensDevicesWithIt() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            // Someone who has the account's token signs a device in, syncs and listens.
            let stranger = try await server.createDevice(accountToken: account.token, name: "Stranger's iPad", platform: .iPadOS)
            stranger.record(EndToEndTests.donation("tomato"), at: Int64(Date().timeIntervalSince1970 * 1000))
            try await stranger.push()
            #expect(try await server.raw(.GET, "/v1/sync/pull", token: stranger.token).status == 200)
            let stream = try await StreamTests.open(server, token: stranger.token)
            #expect(stream.status == .ok)
            let recorder = StreamRecorder()
            let reading = Task { try await recorder.record(stream) }
            defer { reading.cancel() }

            let output = try await Self.admin(server, ["rotate-token", "--json", "--sign-out-devices", "--account", account.id.uuidString])
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
            let newToken = try #require(answer["accountToken"] as? String)
            #expect(answer["tokenGeneration"] as? Int == 2)
            #expect(answer["devicesSignedOut"] as? [String] == [stranger.id.uuidString.lowercased()])

            // Everything the stranger's device could do, refused on the running server.
            // The server hears of the sign-out by its NOTIFY (the admin is another process): until
            // then its cached token may still let an empty push through, though a pull's own check
            // in the database already refuses it. Within 5 s both are refused.
            try await eventually("the stranger's device is refused", timeout: .seconds(5)) {
                let pull = try await server.raw(.GET, "/v1/sync/pull", token: stranger.token)
                let push = try await server.raw(.POST, "/v1/sync/push", token: stranger.token, body: Array(#"{"events":[]}"#.utf8))
                return pull.status == 401 && push.status == 401
            }
            let streamed = try await server.raw(.GET, "/v1/sync/stream", token: stranger.token)
            #expect(streamed.status == 401, "\(streamed.status): \(streamed.json)")
            try await eventually("the stranger's open stream ends", timeout: .seconds(5)) { recorder.hasEnded }
            #expect(try await server.raw(.POST, "/v1/devices", token: account.token, body: Self.pad).status == 401)
            // Its events stay, its sign-out last, as `admin sign-out` leaves them.
            #expect(try await Self.eventTypes(of: stranger.id, server.sql) == ["donation", "deviceSignedOut"])

            // The owner signs in again with the new token.
            let phone = try await server.createDevice(accountToken: newToken)
            #expect(try await server.raw(.GET, "/v1/sync/pull", token: phone.token).status == 200)
        }
    }

    @Test func devicesShowWhichTokenSignedThemInAndThoseOfOneTokenAreSignedOut() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let leaked = try await server.createDevice(accountToken: account.token, name: "Stranger's iPad", platform: .iPadOS)
            let rotated = try await Self.admin(server, ["rotate-token", "--json", "--account", account.id.uuidString])
            let newToken = try #require((try JSONSerialization.jsonObject(with: Data(rotated.utf8)) as? [String: Any])?["accountToken"] as? String)
            let phone = try await server.createDevice(accountToken: newToken)
            // A plain rotation keeps the devices: the stranger's still pulls.
            #expect(try await server.raw(.GET, "/v1/sync/pull", token: leaked.token).status == 200)

            let json = try await Self.admin(server, ["devices", "--json", "--account", account.id.uuidString])
            let report = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any], "\(json)")
            #expect(report["accountTokenGeneration"] as? Int == 2)
            let devices = try #require(report["devices"] as? [[String: Any]])
            let signedInWith = Dictionary(uniqueKeysWithValues: devices.map { ($0["deviceId"] as? String ?? "", $0["signedInWith"] as? Int) })
            #expect(signedInWith == [leaked.id.uuidString: 1, phone.id.uuidString: 2], "\(json)")
            let table = try await Self.admin(server, ["devices", "--account", account.id.uuidString])
            #expect(table.contains("SIGNED IN WITH"), "\(table)")
            let lines = table.split(separator: "\n")
            #expect(lines.contains { $0.contains(leaked.id.uuidString.lowercased()) && $0.contains("token 1 (rotated)") }, "\(table)")
            #expect(lines.contains { $0.contains(phone.id.uuidString.lowercased()) && $0.contains("token 2 ") && !$0.contains("rotated") }, "\(table)")

            // Just the leaked token's devices go, and what they last pulled with them (issue 65, item 10).
            #expect(try await DeviceChangeBudgetTests.syncRows(of: leaked.id, server.sql) == 1)
            let signedOut = try await Self.admin(server, ["sign-out", "--json", "--account", account.id.uuidString, "--signed-in-with", "1"])
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(signedOut.utf8)) as? [String: Any], "\(signedOut)")
            #expect(answer["devicesSignedOut"] as? [String] == [leaked.id.uuidString.lowercased()])
            try await eventually("the leaked token's device is refused", timeout: .seconds(5)) {
                try await server.raw(.GET, "/v1/sync/pull", token: leaked.token).status == 401
            }
            #expect(try await server.raw(.GET, "/v1/sync/pull", token: phone.token).status == 200)
            #expect(try await Self.eventTypes(of: leaked.id, server.sql) == ["deviceSignedOut"])
            #expect(try await Self.eventTypes(of: phone.id, server.sql) == [])
            #expect(try await DeviceChangeBudgetTests.syncRows(of: leaked.id, server.sql) == 0)
            #expect(try await DeviceChangeBudgetTests.syncRows(of: phone.id, server.sql) == 1)

            // A generation past PostgreSQL's integers is a usage error, not a trap (issue 65, item 10).
            let beyond = try await CommandProcess.run(["admin", "sign-out", "--account", account.id.uuidString, "--signed-in-with", "3000000000"],
                                                      environment: ["DATABASE_URL": server.database.urlString])
            defer { beyond.forceStop() }
            #expect(beyond.exitStatus == 2, "\(beyond.exitStatus): \(beyond.errorOutput)")
            #expect(beyond.errorOutput.contains("1 to 2147483647"), "\(beyond.errorOutput)")
            #expect(try await server.raw(.GET, "/v1/sync/pull", token: phone.token).status == 200)
        }
    }

    /// A sign-in whose token was rotated after the server checked it (a few milliseconds, before
    /// the rotation's notification reaches the server) stores no device: the sign-in is checked
    /// against the account's token under the lock the rotation also takes.
    @Test func aSignInCheckedBeforeARotationAndStoredAfterItStoresNothing() async throws {
        try await TestDatabase.withClient { client, _ in
            let accounts = AccountStore(client: client, logger: TestDatabase.shared.logger)
            let leaked = (0..<32).map { _ in UInt8.random(in: 0...255) }
            let account = try await accounts.createAccount(tokenHash: leaked)
            _ = try await accounts.createDevice(account: account, name: "iPhone", platform: "iOS", tokenHash: (0..<32).map { _ in UInt8.random(in: 0...255) },
                                                signedInWith: leaked)
            let fresh = (0..<32).map { _ in UInt8.random(in: 0...255) }
            #expect(try await accounts.rotateToken(account: account, tokenHash: fresh) != nil)
            await #expect(throws: AccountTokenReplaced.self) {
                _ = try await accounts.createDevice(account: account, name: "Stranger's iPad", platform: "iPadOS",
                                                    tokenHash: (0..<32).map { _ in UInt8.random(in: 0...255) }, signedInWith: leaked)
            }
            let devices = try await client.query("SELECT count(*) FROM devices WHERE account_id = \(account)").decode(Int64.self).collectAll()
            #expect(devices == [1], "only the device signed in before the rotation")
            _ = try await accounts.createDevice(account: account, name: "iPad", platform: "iPadOS", tokenHash: (0..<32).map { _ in UInt8.random(in: 0...255) },
                                                signedInWith: fresh)
        }
    }
}

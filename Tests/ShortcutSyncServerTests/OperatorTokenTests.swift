import Foundation
import NIOHTTP1
import ShortcutSyncChildProcess
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

/// A leaked account token or a lost phone, handled by an operator without erasing anything:
/// `admin rotate-token` and `admin sign-out`, against a running service, whose cached tokens
/// stop working at once.
@Suite struct OperatorTokenTests {
    static let device = #"{"name":"iPad","platform":"iPadOS"}"#

    @Test func aRotatedAccountTokenStopsWorkingAndTheNewOneWorks() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            // Used once, so that the running service holds it in its cache.
            #expect(try await server.raw(.POST, "/v1/devices", token: account.token, body: Array(Self.device.utf8)).status == 201)

            let rotated = try await CommandProcess.run(["admin", "rotate-token", "--json", "--account", account.id.uuidString],
                                                       environment: ["DATABASE_URL": server.database.urlString])
            defer { rotated.forceStop() }
            #expect(rotated.exitStatus == 0, "\(rotated.errorOutput)")
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(rotated.output.utf8)) as? [String: Any])
            let token = try #require(answer["accountToken"] as? String)
            #expect(answer["tokenGeneration"] as? Int == 2, "the account's second token")
            #expect(token.hasPrefix("ssa_") && token != account.token)

            try await eventually("the old token is refused", timeout: .seconds(5)) {
                try await server.raw(.POST, "/v1/devices", token: account.token, body: Array(Self.device.utf8)).status == 401
            }
            #expect(try await server.raw(.POST, "/v1/devices", token: token, body: Array(Self.device.utf8)).status == 201)

            let unknown = try await CommandProcess.run(["admin", "rotate-token", "--account", UUID().uuidString],
                                                       environment: ["DATABASE_URL": server.database.urlString])
            defer { unknown.forceStop() }
            #expect(unknown.exitStatus == 2)
            #expect(unknown.errorOutput.hasPrefix("error: there is no account"), "\(unknown.errorOutput)")
        }
    }

    @Test func aSignedOutDeviceIsRefusedAtOnceAndItsEventsStay() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            phone.record(EndToEndTests.donation("tomato"), at: Int64(Date().timeIntervalSince1970 * 1000))
            try await phone.push()
            #expect(try await server.raw(.GET, "/v1/sync/pull", token: phone.token).status == 200)

            let signedOut = try await CommandProcess.run(["admin", "sign-out", "--account", account.id.uuidString, "--device", phone.id.uuidString],
                                                         environment: ["DATABASE_URL": server.database.urlString])
            defer { signedOut.forceStop() }
            #expect(signedOut.exitStatus == 0, "\(signedOut.errorOutput)")
            #expect(signedOut.output.contains("is signed out"))
            try await eventually("the device's token is refused", timeout: .seconds(5)) {
                try await server.raw(.GET, "/v1/sync/pull", token: phone.token).status == 401
            }
            #expect(try await eventCount(server.sql) == 2, "its donation stays, and its sign-out follows it")

            let other = try await CommandProcess.run(["admin", "sign-out", "--account", account.id.uuidString, "--device", UUID().uuidString],
                                                     environment: ["DATABASE_URL": server.database.urlString])
            defer { other.forceStop() }
            #expect(other.exitStatus == 2)
            #expect(other.errorOutput.contains("has no device"), "\(other.errorOutput)")
        }
    }
}

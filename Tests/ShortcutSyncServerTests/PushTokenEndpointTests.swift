import Foundation
import NIOHTTP1
import PostgresNIO
import ShortcutSyncAPI
import ShortcutSyncApp
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncServer
import ShortcutSyncStore
import Testing

/// `PUT` and `DELETE /v1/device/push-token` (DESIGN §5): validated, stored per device, replaced
/// by a newer registration, dropped when the device signs out.
@Suite struct PushTokenEndpointTests {
    @Test func aTokenIsStoredInLowerCaseAndReplacedByANewerOne() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let first = apnsToken().uppercased()
            #expect(try await server.registerPushToken(first, for: phone).status == 204)
            let stored = try #require(try await server.wakeState(of: phone, account: account.id))
            #expect(stored.registration == PushTokenRegistration(token: first.lowercased(), topic: "com.example.shortcuts", environment: "production"))

            let second = apnsToken()
            #expect(try await server.registerPushToken(second, for: phone, topic: "com.example.other", environment: "development").status == 204)
            let replaced = try #require(try await server.wakeState(of: phone, account: account.id))
            #expect(replaced.registration == PushTokenRegistration(token: second, topic: "com.example.other", environment: "development"))
            #expect(replaced.registeredAt >= stored.registeredAt)
            let rows = try await server.sql.query("SELECT count(*) FROM push_tokens WHERE account_id = \(account.id)")
                .decode(Int64.self).collectAll()
            #expect(rows == [1])
        }
    }

    /// A token wakes one device: registered again by another device, of this account or
    /// another, it is taken from the one that had it.
    @Test func aTokenRegisteredByAnotherDeviceIsTakenFromTheFirst() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let pad = try await server.createDevice(accountToken: account.token)
            let stranger = try await server.createAccount()
            let strangersPhone = try await server.createDevice(accountToken: stranger.token)
            let token = apnsToken()
            let other = apnsToken()
            #expect(try await server.registerPushToken(token, for: phone).status == 204)
            #expect(try await server.registerPushToken(other, for: pad).status == 204)

            #expect(try await server.registerPushToken(token.uppercased(), for: strangersPhone).status == 204)
            #expect(try await server.wakeState(of: phone, account: account.id) == nil, "taken from the first holder")
            #expect(try await server.wakeState(of: strangersPhone, account: stranger.id)?.registration.token == token)
            #expect(try await server.wakeState(of: pad, account: account.id)?.registration.token == other, "another token stays")

            #expect(try await server.registerPushToken(token, for: pad).status == 204)
            #expect(try await server.wakeState(of: strangersPhone, account: stranger.id) == nil)
            let holders = try await server.sql.query("SELECT count(*) FROM push_tokens WHERE token = \(token)").decode(Int64.self).collectAll()
            #expect(holders == [1])
        }
    }

    /// With the apps it wakes configured (`--apns-topic`), a token for any other app is refused
    /// and nothing is stored.
    @Test func aTokenForAnAppTheServiceDoesNotWakeIs422() async throws {
        try await TestServer.with(configure: { $0.apnsTopics = ["com.example.shortcuts"] }) { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let refused = try await server.registerPushToken(apnsToken(), for: phone, topic: "com.example.other")
            #expect(refused.status == 422)
            #expect(refused.json.pointers == ["/topic"])
            #expect(try await server.wakeState(of: phone, account: account.id) == nil)
            #expect(try await server.registerPushToken(apnsToken(), for: phone, topic: "com.example.shortcuts").status == 204)
        }
    }

    @Test func everyInvalidFieldIs422WithItsPointer() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let all = try await server.registerPushToken("not hex", for: phone, topic: "nodots", environment: "staging", service: "fcm")
            #expect(all.status == 422)
            #expect(Set(all.json.pointers) == ["/service", "/token", "/topic", "/environment"])
            for token in [String(repeating: "a", count: 62), String(repeating: "a", count: 202), String(repeating: "a", count: 65),
                          String(repeating: "g", count: 64), "", String(repeating: "é", count: 64)] {
                let answer = try await server.registerPushToken(token, for: phone)
                #expect(answer.status == 422, "token of \(token.count) characters")
                #expect(answer.json.pointers == ["/token"])
            }
            // The longest token allowed (100 bytes) is taken.
            #expect(try await server.registerPushToken(String(repeating: "0f", count: 100), for: phone).status == 204)
            // Fields missing or of the wrong type: refused as the client's fault, never a 5xx.
            for body in [#"{"service":"apns"}"#, #"{"service":"apns","token":7,"topic":"a.b","environment":"production"}"#, "[]", "{"] {
                let answer = try await server.raw(.PUT, "/v1/device/push-token", token: phone.token, body: Array(body.utf8))
                #expect((400..<500).contains(answer.status), "\(body)")
            }
            #expect(try await server.wakeState(of: phone, account: account.id)?.registration.token == String(repeating: "0f", count: 100))
        }
    }

    @Test func onlyADeviceRegistersAndDeleteForgets() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let body = Array(#"{"service":"apns","token":"\#(apnsToken())","topic":"com.example.a","environment":"production"}"#.utf8)
            #expect(try await server.raw(.PUT, "/v1/device/push-token", token: account.token, body: body).status == 401)
            #expect(try await server.raw(.PUT, "/v1/device/push-token", token: nil, body: body).status == 401)
            #expect(try await server.raw(.PUT, "/v1/device/push-token", token: phone.token, body: body).status == 204)
            #expect(try await server.raw(.DELETE, "/v1/device/push-token", token: phone.token).status == 204)
            #expect(try await server.wakeState(of: phone, account: account.id) == nil)
            // Forgetting what is not there is no error.
            #expect(try await server.raw(.DELETE, "/v1/device/push-token", token: phone.token).status == 204)
        }
    }

    @Test func signingADeviceOutDropsItsToken() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let pad = try await server.createDevice(accountToken: account.token, name: "iPad", platform: .iPadOS)
            try await server.registerPushToken(apnsToken(), for: phone)
            try await server.registerPushToken(apnsToken(), for: pad)
            #expect(try await server.raw(.DELETE, "/v1/devices/\(phone.id)", token: account.token).status == 204)
            #expect(try await server.wakeState(of: phone, account: account.id) == nil)
            #expect(try await server.wakeState(of: pad, account: account.id) != nil, "the other device keeps its own")
            // Its device token no longer holds: no registration either.
            #expect(try await server.registerPushToken(apnsToken(), for: phone).status == 401)
        }
    }
}

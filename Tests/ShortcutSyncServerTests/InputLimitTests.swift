import Foundation
import NIOHTTP1
import ShortcutSyncAPI
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import Testing

/// Every limit and malformed input of DESIGN §2 and §4 gets its error, and nothing is stored.
@Suite struct InputLimitTests {
    static func event(seq: Int, type: String = "voiceShortcutUpdated", wall: Int64 = Int64(Date().timeIntervalSince1970 * 1000),
                      fields: String = #""voiceShortcutId":"6E9B3A52-2B7B-4E55-9C5A-4D38D7C1B0A1","phrase":"order soup""#) -> String {
        #"{"id":"\#(UUID())","seq":\#(seq),"hlc":{"wallMillis":\#(wall),"counter":0},"type":"\#(type)",\#(fields)}"#
    }

    static func push(_ events: [String]) -> [UInt8] {
        Array(#"{"events":[\#(events.joined(separator: ","))]}"#.utf8)
    }

    @Test func everyBadPushGetsItsErrorAndStoresNothing() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            let first = try await server.raw(.POST, "/v1/sync/push", token: device.token, body: Self.push([Self.event(seq: 1)]))
            #expect(first.status == 200)

            let cases: [(name: String, body: [UInt8], status: Int, pointers: [String])] = [
                ("malformed JSON", Array(#"{"events":[{"id":"#.utf8), 400, []),
                ("wrong type of a field", Self.push([Self.event(seq: 2).replacingOccurrences(of: #""seq":2"#, with: #""seq":"two""#)]), 422, ["/events/0/seq"]),
                ("unknown event type", Self.push([Self.event(seq: 2, type: "shortcutRenamed")]), 422, ["/events/0/type"]),
                ("missing field", Self.push([Self.event(seq: 2, fields: #""phrase":"soup""#)]), 422, ["/events/0/voiceShortcutId"]),
                // The generated types take these; the domain's decoding of the push refuses them.
                ("deletion with all: false", Self.push([Self.event(seq: 2, type: "deletion", fields: #""bundleId":"com.example.soup","all":false"#)]), 422, ["/events/0/all"]),
                ("deletion with two selectors", Self.push([Self.event(seq: 2, type: "deletion", fields: #""bundleId":"com.example.soup","identifiers":["x"],"all":true"#)]), 422, ["/events/0"]),
                ("not a UUID", Self.push([Self.event(seq: 2, fields: #""voiceShortcutId":"nope","phrase":"soup""#)]), 422, ["/events/0/voiceShortcutId"]),
                ("blank phrase", Self.push([Self.event(seq: 2, fields: #""voiceShortcutId":"6E9B3A52-2B7B-4E55-9C5A-4D38D7C1B0A1","phrase":"  ""#)]), 422, ["/events/0/phrase"]),
                ("hlc too far ahead", Self.push([Self.event(seq: 2, wall: Int64(Date().timeIntervalSince1970 * 1000) + 6 * 60 * 1000)]), 422, ["/events/0/hlc/wallMillis"]),
                ("a bad second event spoils the batch", Self.push([Self.event(seq: 2), Self.event(seq: 3, fields: #""voiceShortcutId":"6E9B3A52-2B7B-4E55-9C5A-4D38D7C1B0A1","phrase":"\#(String(repeating: "a", count: 101))""#)]), 422, ["/events/1/phrase"]),
                ("too many events", Self.push((0..<501).map { Self.event(seq: $0 + 2) }), 413, ["/events"]),
                ("oversized body", Self.push([Self.event(seq: 2, type: "donation", fields: #""bundleId":"com.example.soup","identifier":"x","kind":"intent","intentType":"I","title":"t","parameters":{"blob":"\#(String(repeating: "p", count: 1_100_000))"}"#)]), 413, []),
                ("parameters over 16 KiB", Self.push([Self.event(seq: 2, type: "donation", fields: #""bundleId":"com.example.soup","identifier":"x","kind":"intent","intentType":"I","title":"t","parameters":{"blob":"\#(String(repeating: "p", count: 17_000))"}"#)]), 422, ["/events/0/parameters"]),
                ("seq gap", Self.push([Self.event(seq: 3)]), 409, ["/events/0/seq"]),
                ("seq reuse with another id", Self.push([Self.event(seq: 1)]), 409, ["/events/0/seq"]),
                ("empty push", Self.push([]), 422, ["/events"]),
            ]
            for bad in cases {
                let answer = try await server.raw(.POST, "/v1/sync/push", token: device.token, body: bad.body)
                #expect(answer.status == bad.status, "\(bad.name)")
                #expect(answer.json["status"] as? Int == bad.status, "\(bad.name): the body is problem+json")
                #expect(answer.json["title"] is String, "\(bad.name)")
                #expect(answer.json.pointers == bad.pointers, "\(bad.name)")
            }
            let gap = try await server.raw(.POST, "/v1/sync/push", token: device.token, body: Self.push([Self.event(seq: 3)]))
            #expect(gap.json["expectedSeq"] as? Int == 2)
            #expect(gap.json["lastAcceptedSeq"] as? Int == 1)
            #expect(try await eventCount(server.sql) == 1)
        }
    }

    @Test func aRetriedPushSucceedsAndStoresNothingTwice() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            let body = Self.push([Self.event(seq: 1), Self.event(seq: 2)])
            let first = try await server.raw(.POST, "/v1/sync/push", token: device.token, body: body)
            let again = try await server.raw(.POST, "/v1/sync/push", token: device.token, body: body)
            #expect(first.status == 200 && again.status == 200)
            #expect(again.json["lastAcceptedSeq"] as? Int == 2)
            #expect(again.json["version"] as? Int == first.json["version"] as? Int)
            #expect(try await eventCount(server.sql) == 2)
        }
    }

    @Test func badDeviceRegistrationsAreRefused() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let blank = try await server.raw(.POST, "/v1/devices", token: account.token, body: Array(#"{"name":"  ","platform":"iOS"}"#.utf8))
            #expect(blank.status == 422)
            #expect(blank.json.pointers == ["/name"])
            let platform = try await server.raw(.POST, "/v1/devices", token: account.token, body: Array(#"{"name":"Toaster","platform":"toasterOS"}"#.utf8))
            #expect(platform.status == 422)
            #expect(platform.json.pointers == ["/platform"])
        }
    }
}

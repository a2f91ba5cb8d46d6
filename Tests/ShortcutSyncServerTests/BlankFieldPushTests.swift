import Foundation
import NIOHTTP1
import PostgresNIO
import ShortcutSyncStore
import ShortcutSyncDatabaseTestSupport
import Testing

/// A push with any blank text field is refused with 422 and the field's pointer, and stores nothing.
@Suite struct BlankFieldPushTests {
    /// A donation's fields as JSON, with `field` replaced by `value` (a JSON literal).
    static func donation(_ field: String, _ value: String) -> String {
        var fields: [(String, String)] = [
            ("bundleId", #""com.example.soup""#), ("identifier", #""tomato""#), ("kind", #""userActivity""#),
            ("activityType", #""com.example.order""#), ("title", #""Tomato soup""#), ("subtitle", #""Hot""#),
            ("groupIdentifier", #""soups""#), ("keywords", #"["soup","tomato","lunch"]"#),
        ]
        if field == "intentType" {
            fields = fields.map { $0.0 == "kind" ? ("kind", #""intent""#) : $0 }.filter { $0.0 != "activityType" } + [("intentType", value)]
        } else {
            fields = fields.map { $0.0 == field ? (field, value) : $0 }
        }
        return fields.map { #""\#($0.0)":\#($0.1)"# }.joined(separator: ",")
    }

    @Test func everyBlankFieldIsRefusedWithItsPointerAndNothingIsStored() async throws {
        // Spaces, a tab and a newline, an ideographic space, a no-break and a thin space, a BOM.
        let blank = #""  \t\n\u3000\u00a0\u2009\ufeff""#
        let voiceId = "6E9B3A52-2B7B-4E55-9C5A-4D38D7C1B0A1"
        let cases: [(type: String, fields: String, pointer: String)] = [
            ("donation", Self.donation("title", blank), "/events/0/title"),
            ("donation", Self.donation("subtitle", blank), "/events/0/subtitle"),
            ("donation", Self.donation("identifier", blank), "/events/0/identifier"),
            ("donation", Self.donation("groupIdentifier", blank), "/events/0/groupIdentifier"),
            ("donation", Self.donation("activityType", blank), "/events/0/activityType"),
            ("donation", Self.donation("intentType", blank), "/events/0/intentType"),
            ("donation", Self.donation("keywords", #"["soup","tomato",\#(blank)]"#), "/events/0/keywords/2"),
            ("donation", Self.donation("bundleId", blank), "/events/0/bundleId"),
            ("deletion", #""bundleId":"com.example.soup","identifiers":["tomato",\#(blank)]"#, "/events/0/identifiers/1"),
            ("deletion", #""bundleId":"com.example.soup","groupIdentifier":\#(blank)"#, "/events/0/groupIdentifier"),
            ("appsReported", #""installed":["com.example.soup",\#(blank)]"#, "/events/0/installed/1"),
            ("voiceShortcutAdded", #""voiceShortcutId":"\#(voiceId)","phrase":"order soup","bundleId":"com.example.soup","identifier":"tomato","title":\#(blank)"#, "/events/0/title"),
            ("voiceShortcutAdded", #""voiceShortcutId":"\#(voiceId)","phrase":"order soup","bundleId":"com.example.soup","identifier":\#(blank),"title":"Tomato soup""#, "/events/0/identifier"),
            ("voiceShortcutUpdated", #""voiceShortcutId":"\#(voiceId)","phrase":\#(blank)"#, "/events/0/phrase"),
        ]
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            for bad in cases {
                let body = InputLimitTests.push([InputLimitTests.event(seq: 1, type: bad.type, fields: bad.fields)])
                let answer = try await server.raw(.POST, "/v1/sync/push", token: device.token, body: body)
                #expect(answer.status == 422, "\(bad.pointer) of \(bad.type)")
                #expect(answer.json.pointers == [bad.pointer], "\(bad.type)")
                #expect((answer.json["errors"] as? [[String: Any]])?.first?["detail"] as? String == "must not be blank", "\(bad.pointer) of \(bad.type)")
            }
            #expect(try await eventCount(server.sql) == 0)

            // The same events with something in the field are accepted: the refusals were for blankness.
            let fine = InputLimitTests.push([InputLimitTests.event(seq: 1, type: "donation", fields: Self.donation("title", #"" soup ""#))])
            #expect(try await server.raw(.POST, "/v1/sync/push", token: device.token, body: fine).status == 200)
            #expect(try await eventCount(server.sql) == 1)
        }
    }

    /// PostgreSQL cannot store U+0000; it used to be a 500.
    @Test func u0000InATextFieldOrParametersIsRefusedNotA500() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            let cases: [(fields: String, pointer: String)] = [
                (Self.donation("title", #""Tomato\u0000soup""#), "/events/0/title"),
                (Self.donation("title", #""Tomato soup","parameters":{"size\u0000":"large"}"#), "/events/0/parameters"),
            ]
            for bad in cases {
                let body = InputLimitTests.push([InputLimitTests.event(seq: 1, type: "donation", fields: bad.fields)])
                let answer = try await server.raw(.POST, "/v1/sync/push", token: device.token, body: body)
                #expect(answer.status == 422, "\(bad.pointer)")
                #expect(answer.json.pointers == [bad.pointer])
            }
            let name = try await server.raw(.POST, "/v1/devices", token: account.token, body: Array(#"{"name":"iPad\u0000","platform":"iPadOS"}"#.utf8))
            #expect(name.status == 422)
            #expect(name.json.pointers == ["/name"])
            #expect(try await eventCount(server.sql) == 0)
        }
    }

    @Test func aBlankDeviceNameIsRefusedAndANameIsKeptWithoutItsBlanks() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            for name in [#"" \u3000 ""#, #""\ufeff""#, #""""#] {
                let answer = try await server.raw(.POST, "/v1/devices", token: account.token, body: Array(#"{"name":\#(name),"platform":"iOS"}"#.utf8))
                #expect(answer.status == 422, "\(name)")
                #expect(answer.json.pointers == ["/name"], "\(name)")
            }
            let long = try await server.raw(.POST, "/v1/devices", token: account.token,
                                            body: Array(#"{"name":"\#(String(repeating: "e\\u0301", count: 101))","platform":"iOS"}"#.utf8))
            #expect(long.status == 422, "202 code points, though 101 characters")
            let padded = try await server.raw(.POST, "/v1/devices", token: account.token, body: Array(#"{"name":"\u3000 Kitchen iPad\u2003","platform":"iPadOS"}"#.utf8))
            #expect(padded.status == 201)
            let names = try await server.sql.query("SELECT name FROM devices").decode(String.self).collectAll()
            #expect(names == ["Kitchen iPad"])
        }
    }
}

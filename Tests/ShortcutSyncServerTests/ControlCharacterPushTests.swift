import Foundation
import NIOHTTP1
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import Testing

/// The texts a person reads (a device's name, a shortcut's title and subtitle, phrases) hold no
/// C0 or C1 control character (issue 56): `ESC ] 0 ;` in a name retitled the operator's terminal.
/// Refused with 422 and the field's pointer, nothing stored.
@Suite struct ControlCharacterPushTests {
    /// ESC, BEL, DEL and the C1 CSI, each as JSON escapes it.
    static let controls = [#"\u001b]0;owned\u0007"#, #"\u007f"#, #"\u009b2J"#, #"\r"#]

    @Test func aControlCharacterInADisplayedTextIsRefusedWithItsPointerAndNothingIsStored() async throws {
        let voiceId = "6E9B3A52-2B7B-4E55-9C5A-4D38D7C1B0A1"
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            for control in Self.controls {
                let text = #""Tomato \#(control)soup""#
                let cases: [(type: String, fields: String, pointer: String)] = [
                    ("donation", BlankFieldPushTests.donation("title", text), "/events/0/title"),
                    ("donation", BlankFieldPushTests.donation("subtitle", text), "/events/0/subtitle"),
                    ("donation", BlankFieldPushTests.donation("title", #""Tomato soup","suggestedInvocationPhrase":\#(text)"#), "/events/0/suggestedInvocationPhrase"),
                    ("voiceShortcutAdded", #""voiceShortcutId":"\#(voiceId)","phrase":"order soup","bundleId":"com.example.soup","identifier":"tomato","title":\#(text)"#, "/events/0/title"),
                    ("voiceShortcutAdded", #""voiceShortcutId":"\#(voiceId)","phrase":\#(text),"bundleId":"com.example.soup","identifier":"tomato","title":"Tomato soup""#, "/events/0/phrase"),
                    ("voiceShortcutUpdated", #""voiceShortcutId":"\#(voiceId)","phrase":\#(text)"#, "/events/0/phrase"),
                ]
                for bad in cases {
                    let body = InputLimitTests.push([InputLimitTests.event(seq: 1, type: bad.type, fields: bad.fields)])
                    let answer = try await server.raw(.POST, "/v1/sync/push", token: device.token, body: body)
                    #expect(answer.status == 422, "\(bad.pointer) of \(bad.type) with \(control)")
                    #expect(answer.json.pointers == [bad.pointer], "\(bad.type) with \(control)")
                    let detail = (answer.json["errors"] as? [[String: Any]])?.first?["detail"] as? String
                    #expect(detail?.hasPrefix("must not contain a control character") == true, "\(bad.pointer): \(detail ?? "none")")
                }
                let name = try await server.raw(.POST, "/v1/devices", token: account.token,
                                                body: Array(#"{"name":"Kitchen \#(control)iPad","platform":"iPadOS"}"#.utf8))
                #expect(name.status == 422, "a name with \(control)")
                #expect(name.json.pointers == ["/name"])
            }
            #expect(try await eventCount(server.sql) == 0)
            #expect(try await server.sql.query("SELECT name FROM devices").decode(String.self).collectAll() == ["iPhone"])

            // The same texts without the control characters are accepted, and so is one in an
            // identifier, which is the app's key and not a text shown to anybody.
            let fine = InputLimitTests.push([InputLimitTests.event(seq: 1, type: "donation", fields: BlankFieldPushTests.donation("identifier", #""tomato\u0007""#))])
            #expect(try await server.raw(.POST, "/v1/sync/push", token: device.token, body: fine).status == 200)
            #expect(try await eventCount(server.sql) == 1)
            let named = try await server.raw(.POST, "/v1/devices", token: account.token, body: Array(#"{"name":"Kitchen iPad ✓","platform":"iPadOS"}"#.utf8))
            #expect(named.status == 201)
        }
    }
}

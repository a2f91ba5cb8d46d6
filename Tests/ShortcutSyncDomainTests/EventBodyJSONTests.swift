import Foundation
import ShortcutSyncDomain
import ShortcutSyncTestSupport
import Testing

/// `EventBody.fieldsJSON`, how pushed events are stored, says what `encodeFields(to:)` says.
@Suite struct EventBodyJSONTests {
    /// The JSON `Codable` writes for a body, as `JSONEncoder` writes it.
    struct Fields: Encodable {
        var body: EventBody
        func encode(to encoder: any Encoder) throws { try body.encodeFields(to: encoder) }
    }

    static func parsed(_ json: String) throws -> NSDictionary {
        try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? NSDictionary)
    }

    static func expectSame(_ body: EventBody) throws {
        let fast = try parsed(body.fieldsJSON)
        let coded = try parsed(String(decoding: try JSONEncoder().encode(Fields(body: body)), as: UTF8.self))
        #expect(fast == coded, "\(body.fieldsJSON)")
    }

    @Test func everyBodyOfRandomHistoriesIsWrittenAsCodableWritesIt() throws {
        var scenario = Scenario(seed: 17, accounts: 2, devicesPerAccount: 3)
        var bodies = 0
        for _ in 0..<300 {
            for event in scenario.push().events {
                try Self.expectSame(event.event.body)
                bodies += 1
            }
        }
        #expect(bodies > 500)
    }

    @Test func stringsNeedingEscapesAndEveryKindOfParameterSurvive() throws {
        let awkward = "quote \" backslash \\ newline \n tab \t bell \u{07} nul \u{00} é 汤 🍅 \u{2028}"
        try Self.expectSame(.donation(Donation(
            bundleId: "com.example.soup", identifier: awkward, kind: .userActivity, activityType: "a.b", title: awkward,
            subtitle: "", groupIdentifier: nil, suggestedInvocationPhrase: awkward, keywords: [awkward, ""],
            eligibleForSearch: true, eligibleForPrediction: false,
            parameters: ["n": .number(2), "x": .number(0.1), "big": .number(1e20), "neg": .number(-3.5), "z": .null, "t": .bool(true),
                         "s": .string(awkward), "a": .array([.number(1), .string("b"), .array([]), .object([:])]),
                         "o": .object(["deep": .object(["deeper": .array([.null, .bool(false)])])])])))
        try Self.expectSame(.deletion(Deletion(bundleId: "com.example.soup", selector: .identifiers([awkward]))))
        try Self.expectSame(.deletion(Deletion(bundleId: "com.example.soup", selector: .groupIdentifier(awkward))))
        try Self.expectSame(.deletion(Deletion(bundleId: "com.example.soup", selector: .all)))
        try Self.expectSame(.appsReported(AppsReported(installed: [])))
    }
}

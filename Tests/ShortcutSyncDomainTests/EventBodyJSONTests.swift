import Foundation
@testable import ShortcutSyncDomain
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

    /// What the validator measures of a donation's parameters without writing them
    /// (`JSONText.measure`) is what the stored body writes of them, byte for byte, and it finds
    /// U+0000 wherever a key or a string holds it.
    @Test func parametersAreMeasuredAsTheyAreWritten() {
        var generator = SystemRandomNumberGenerator()
        let characters: [String] = ["a", "Z", " ", "\"", "\\", "/", "\n", "\r", "\t", "\u{08}", "\u{0C}", "\u{01}", "\u{1F}", "\u{00}",
                                    "\u{7F}", "é", "汤", "🍅", "\u{2028}"]
        func text() -> String {
            String((0..<Int.random(in: 0...6, using: &generator)).map { _ in characters.randomElement(using: &generator)! }.joined())
        }
        func value(depth: Int) -> JSONValue {
            switch Int.random(in: 0..<(depth < 3 ? 7 : 5), using: &generator) {
            case 0: return .null
            case 1: return .bool(Bool.random(using: &generator))
            case 2: return .number([0, -1, 42, 1e20, 0.1, -3.5, 123_456_789_012, 1e-7].randomElement(using: &generator)!)
            case 3, 4: return .string(text())
            case 5: return .array((0..<Int.random(in: 0...3, using: &generator)).map { _ in value(depth: depth + 1) })
            default:
                return .object(Dictionary((0..<Int.random(in: 0...3, using: &generator)).map { _ in (text(), value(depth: depth + 1)) },
                                          uniquingKeysWith: { first, _ in first }))
            }
        }
        func holdsNull(_ value: JSONValue) -> Bool {
            switch value {
            case .null, .bool, .number: false
            case .string(let string): string.unicodeScalars.contains("\u{00}")
            case .array(let values): values.contains(where: holdsNull)
            case .object(let members): members.contains { $0.key.unicodeScalars.contains("\u{00}") || holdsNull($0.value) }
            }
        }
        func written(_ parameters: [String: JSONValue]) -> Int {
            EventBody.donation(Donation(bundleId: "a.b", identifier: "i", kind: .intent, title: "t", parameters: parameters)).fieldsJSON.utf8.count
        }
        let empty = written([:])
        var nulls = 0
        for _ in 0..<3_000 {
            let parameters = Dictionary((0..<Int.random(in: 0...4, using: &generator)).map { _ in (text(), value(depth: 1)) },
                                        uniquingKeysWith: { first, _ in first })
            let measured = JSONText.measure(.object(parameters))
            // `{}` is what an empty object takes in the body written without parameters.
            #expect(measured.bytes == written(parameters) - empty + 2, "\(parameters)")
            #expect(measured.hasNull == holdsNull(.object(parameters)), "\(parameters)")
            if measured.hasNull { nulls += 1 }
        }
        #expect(nulls > 300)
    }
}

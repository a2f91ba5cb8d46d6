import Foundation
@testable import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

/// The fold's reader of the fields of an event that is not a donation (`FoldLogCoding.Extras`,
/// read by the push's JSON parser through `JSONFlatArray`) reads what an encoder wrote, whatever the strings hold, and refuses
/// whatever is not of its kind.
@Suite struct FoldLogExtrasTests {
    /// The seven fields as PostgreSQL's `jsonb_build_array` writes them, around `list` and `phrase`.
    static func extras(phrase: String = "null", list: String) -> String {
        "[null, \(phrase), null, \(list), null, null, null]"
    }

    /// Random strings (quotes, backslashes, control characters, other scripts, emoji, empty
    /// ones) as a phrase and a list, written by `JSONEncoder` with and without escaped slashes,
    /// and by hand with every character as a `\u` escape (surrogate pairs beyond the first
    /// plane), read back equal.
    @Test(arguments: 0..<20 as Range<UInt64>)
    func readsBackWhatAnEncoderWrote(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let alphabet: [String] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\r", "\u{08}", "\u{0C}", "\u{01}", "\u{1F}", "é", "ß",
                                     "суп", "汤", "😀", "👩‍👩‍👧", "\u{7F}", "\u{2028}"]
        let strings = (0..<Int.random(in: 0...6, using: &random)).map { _ in
            (0..<Int.random(in: 0...12, using: &random)).map { _ in alphabet.randomElement(using: &random)! }.joined()
        }
        let phrase = strings.joined(separator: "\\")
        let encoder = JSONEncoder()
        func encoded(_ value: some Encodable) throws -> String { String(decoding: try encoder.encode(value), as: UTF8.self) }
        let expected = FoldLogCoding.Extras(phrase: phrase, list: strings)
        #expect(FoldLogCoding.Extras.parse(Self.extras(phrase: try encoded(phrase), list: try encoded(strings))) == expected)
        encoder.outputFormatting = .withoutEscapingSlashes
        #expect(FoldLogCoding.Extras.parse(Self.extras(phrase: try encoded(phrase), list: try encoded(strings))) == expected)
        func escaped(_ string: String) -> String { "\"" + string.utf16.map { String(format: "\\u%04X", $0) }.joined() + "\"" }
        let list = "[ " + strings.map(escaped).joined(separator: " , ") + " ]"
        #expect(FoldLogCoding.Extras.parse(Self.extras(phrase: escaped(phrase), list: list)) == expected)
    }

    /// Every field in its place, as a push's body gives it, with JSON's whitespace anywhere between.
    @Test func readsEveryFieldInItsPlace() {
        let voice = UUID(), device = UUID()
        #expect(FoldLogCoding.Extras.parse("[\"\(voice.uuidString)\", \"Order soup\", \"Soup \\\"hot\\\"\", null, \"shortcut\", \"\(device.uuidString.lowercased())\", true]")
                == FoldLogCoding.Extras(voiceId: voice, phrase: "Order soup", title: "Soup \"hot\"", scope: "shortcut", scopeDevice: device, paused: true))
        #expect(FoldLogCoding.Extras.parse("\n[null,null,null,[],null,null,false] ") == FoldLogCoding.Extras(list: [], paused: false))
        #expect(FoldLogCoding.Extras.parse("[null, null, null, null, null, null, null]") == FoldLogCoding.Extras())
    }

    @Test(arguments: [
        // The list: not an array of strings.
        "1", "[1]", "[\"a\", 2]", "[\"a\",]", "[,\"a\"]", "[\"a\" \"b\"]", "[[\"a\"]]", "{\"a\": \"b\"}", "\"a\"", "[null]", "[",
        // A string of the list: a bad escape, a lone surrogate, a control character, no end.
        "[\"a\\x\"]", "[\"\\u12\"]", "[\"\\uD800\"]", "[\"\\uDC00\"]", "[\"\\uD800\\u0041\"]", "[\"\\uD800 \\uDC00\"]",
        "[\"a\u{01}\"]", "[\"unterminated]", "[\"a\\\"]",
    ])
    func refusesAListThatIsNotOneOfStrings(list: String) {
        #expect(FoldLogCoding.Extras.parse(Self.extras(list: list)) == nil)
    }

    @Test(arguments: [
        "", "null", "[]", "[null, null, null, null, null, null]", "[null, null, null, null, null, null, null, null]",
        "[null, null, null, null, null, null, null] x", "[null null, null, null, null, null, null]",
        // A field of another kind: an id that is not a UUID, a number for a phrase, a string for a pause.
        "[\"soup\", null, null, null, null, null, null]", "[null, 1, null, null, null, null, null]",
        "[null, null, null, null, null, null, \"true\"]", "[null, null, null, null, null, null, tru]",
        "[null, null, null, null, null, [\"a\"], null]", "[nul, null, null, null, null, null, null]",
    ])
    func refusesWhatIsNotTheSevenFields(text: String) {
        #expect(FoldLogCoding.Extras.parse(text) == nil)
    }
}

import Foundation
@testable import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

/// The fold's reader of a JSON array of strings (`JSONStringArray`) reads what an encoder wrote,
/// whatever the strings hold, and refuses whatever is not an array of strings.
@Suite struct JSONStringArrayTests {
    /// Arrays of random strings (quotes, backslashes, control characters, other scripts, emoji,
    /// empty ones), written by `JSONEncoder` with and without escaped slashes, and by hand with
    /// every character as a `\u` escape (surrogate pairs beyond the first plane), read back equal.
    @Test(arguments: 0..<20 as Range<UInt64>)
    func readsBackWhatAnEncoderWrote(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let alphabet: [String] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\r", "\u{08}", "\u{0C}", "\u{01}", "\u{1F}", "é", "ß",
                                     "суп", "汤", "😀", "👩‍👩‍👧", "\u{7F}", "\u{2028}"]
        let strings = (0..<Int.random(in: 0...6, using: &random)).map { _ in
            (0..<Int.random(in: 0...12, using: &random)).map { _ in alphabet.randomElement(using: &random)! }.joined()
        }
        let encoder = JSONEncoder()
        #expect(JSONStringArray.parse(String(decoding: try encoder.encode(strings), as: UTF8.self)) == strings)
        encoder.outputFormatting = .withoutEscapingSlashes
        #expect(JSONStringArray.parse(String(decoding: try encoder.encode(strings), as: UTF8.self)) == strings)
        let escaped = "[ " + strings.map { string in
            "\"" + string.utf16.map { String(format: "\\u%04X", $0) }.joined() + "\""
        }.joined(separator: " , ") + " ]"
        #expect(JSONStringArray.parse(escaped) == strings)
    }

    @Test(arguments: ["", "[", "]", "[1]", "[\"a\", 2]", "[\"a\",]", "[,\"a\"]", "[\"a\" \"b\"]", "[[\"a\"]]", "{\"a\": \"b\"}", "\"a\"",
                      "null", "[null]", "[\"a\"] x", "[\"a\\x\"]", "[\"\\u12\"]", "[\"\\uD800\"]", "[\"\\uDC00\"]", "[\"\\uD800\\u0041\"]",
                      "[\"a\u{01}\"]", "[\"unterminated]", "[\"a\\\"]"])
    func refusesWhatIsNotAnArrayOfStrings(text: String) {
        #expect(JSONStringArray.parse(text) == nil)
    }

    @Test func readsPostgreSQLsText() {
        #expect(JSONStringArray.parse("[]") == [])
        #expect(JSONStringArray.parse("[\"soup-1\", \"soup \\\"hot\\\"\", \"back\\\\slash\"]") == ["soup-1", "soup \"hot\"", "back\\slash"])
    }
}

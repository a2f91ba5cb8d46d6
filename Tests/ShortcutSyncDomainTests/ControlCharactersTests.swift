import Foundation
import ShortcutSyncDomain
import ShortcutSyncTestSupport
import Testing

/// The C0 and C1 control characters: found exactly, shown escaped, and refused by
/// `openapi.yaml`'s pattern for a text a person reads exactly when the code refuses them.
@Suite struct ControlCharactersTests {
    @Test func everyC0AndC1ControlIsFoundAndNothingElse() {
        for value: UInt32 in Array(0x00...0x1F) + Array(0x7F...0x9F) {
            let scalar = Unicode.Scalar(value)!
            #expect(ControlCharacters.first(in: "soup\(Character(scalar))x") == scalar, "U+\(String(value, radix: 16))")
        }
        for text in ["Tomato soup", "汤 🍅", "\u{A0}\u{2028}\u{FEFF}", "é\u{301}", "\u{100}\u{142}\u{C280}", ""] {
            #expect(ControlCharacters.first(in: text) == nil, "\(text.debugDescription)")
        }
    }

    @Test func escapedShowsEachControlAsALiteralAndKeepsLineBreaksWhenAsked() {
        #expect(ControlCharacters.escaped("Kitchen \u{1B}]0;owned\u{07}iPad\u{9B}") == #"Kitchen \u{1B}]0;owned\u{7}iPad\u{9B}"#)
        #expect(ControlCharacters.escaped("a\nb\u{7F}") == #"a\u{A}b\u{7F}"#)
        #expect(ControlCharacters.escaped("a\nb\r", keepingLineBreaks: true) == "a\n" + #"b\u{D}"#)
        #expect(ControlCharacters.escaped("汤 soup") == "汤 soup")
    }

    /// The pattern and the code (not blank, no control character) agree on random texts.
    @Test func theTextPatternRefusesExactlyWhatTheCodeRefuses() throws {
        let pattern = try NSRegularExpression(pattern: ControlCharacters.textPattern)
        let alphabet: [String] = ["a", " ", "\u{3000}", "\u{A0}", "\u{85}", "\u{1B}", "\u{07}", "\t", "\n", "\u{7F}", "\u{9F}", "\u{A1}", "汤", "🍅", "\u{1F}", "\u{20}"]
        var random = SeededGenerator(seed: 56)
        for _ in 0..<5_000 {
            let text = (0..<Int.random(in: 1...8, using: &random)).map { _ in alphabet.randomElement(using: &random)! }.joined()
            // ICU's `$` also matches before a final line break, ECMA-262's does not: the whole text must match.
            let whole = NSRange(text.startIndex..., in: text)
            let matches = pattern.firstMatch(in: text, range: whole)?.range == whole
            #expect(matches == (!BlankText.isBlank(text) && ControlCharacters.first(in: text) == nil), "\(text.debugDescription)")
        }
    }
}

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
        // Issue 65, item 7: the bidirectional formatting characters, which reorder what a line
        // shows ("exe.txt" drawn for "\u{202E}txt.exe"), are not refused (right-to-left text uses
        // the marks), but shown escaped wherever an operator reads them.
        for value: UInt32 in [0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069] {
            let scalar = Unicode.Scalar(value)!
            #expect(ControlCharacters.first(in: "soup\(Character(scalar))x") == nil, "U+\(String(value, radix: 16))")
            #expect(ControlCharacters.escaped("a\(Character(scalar))b") == "a\\u{\(String(value, radix: 16, uppercase: true))}b")
        }
        for text in ["\u{628}\u{62D}\u{631}", "soup – tea…", "👩\u{200D}🍳", "\u{2065}\u{206A}\u{2029}\u{202F}"] {
            #expect(ControlCharacters.escaped(text) == text, "\(text.debugDescription)")
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
        let alphabet: [String] = ["a", " ", "\u{3000}", "\u{A0}", "\u{85}", "\u{1B}", "\u{07}", "\t", "\n", "\u{7F}", "\u{9F}", "\u{A1}", "汤", "🍅", "\u{1F}", "\u{20}",
                                  "\u{202E}", "\u{2066}", "\u{200F}", "\u{61C}", "\u{628}", "–"]
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

import Foundation

/// The C0 and C1 control characters (U+0000–U+001F, U+007F, U+0080–U+009F): what a text a
/// person reads may not hold, and how one is shown where it is held anyway.
///
/// A terminal obeys them: `ESC ] 0 ;` retitles the window, `ESC [` moves the cursor and clears
/// the screen, BEL rings, CR overwrites the line. A device's name or a shortcut's title printed
/// by `admin devices` could do that to an operator (issue 56), so the texts a person reads (a
/// device's name, a title, a subtitle, a phrase; Apple's own never hold one) are refused with
/// them, and every text printed for people (the admin tables, the demo) shows them escaped, for
/// rows written before the refusal and for the identifiers, which are the app's keys and may.
///
/// The bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A–U+202E,
/// U+2066–U+2069) are shown escaped too (issue 65, item 7), though not refused: a terminal draws
/// nothing for them, but they reorder what follows, so that a line shows other text than it holds
/// (U+202E turns `txt.exe` around); right-to-left text uses the marks among them, so a person's
/// text may hold them, and only where an operator reads it are they shown as what they are.
public enum ControlCharacters {
    /// Whether `scalar` is a C0 or C1 control character, DEL included.
    @inline(__always)
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// Whether `scalar` is one of the bidirectional formatting characters: the marks ALM, LRM and
    /// RLM, the embeddings and overrides LRE, RLE, PDF, LRO, RLO, and the isolates LRI, RLI, FSI, PDI.
    @inline(__always)
    public static func isBidiFormatting(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// Whether `value` may hold a control character, read from its bytes without decoding them:
    /// in UTF-8 a C0 control or DEL is a byte of its own, a C1 control is 0xC2 followed by
    /// 0x80–0x9F. With `orBidi`, also a byte that starts a bidirectional formatting character
    /// (0xD8 for U+061C, 0xE2 for the others). A text without any (nearly every one) is read once.
    private static func mayHoldControl(_ value: String, orBidi: Bool) -> Bool {
        func scan(_ bytes: some Collection<UInt8>) -> Bool {
            var afterC2 = false
            for byte in bytes {
                if byte < 0x20 || byte == 0x7F || (afterC2 && byte <= 0x9F) || (orBidi && (byte == 0xD8 || byte == 0xE2)) { return true }
                afterC2 = byte == 0xC2
            }
            return false
        }
        return value.utf8.withContiguousStorageIfAvailable(scan) ?? scan(value.utf8)
    }

    /// The first control character of `value`; nil when it has none (`mayHoldControl` first).
    public static func first(in value: String) -> Unicode.Scalar? {
        guard mayHoldControl(value, orBidi: false) else { return nil }
        return value.unicodeScalars.first(where: isControl)
    }

    /// `value` with each control character and bidirectional formatting character written as
    /// Swift writes it in a string literal, `\u{1B}`: printable, and as plain to an operator as
    /// the character was meant. Line breaks are kept when `keepingLineBreaks` (a whole report,
    /// whose lines they separate).
    public static func escaped(_ value: String, keepingLineBreaks: Bool = false) -> String {
        guard mayHoldControl(value, orBidi: true) else { return value }
        var shown = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            if isControl(scalar) || isBidiFormatting(scalar), !(keepingLineBreaks && scalar == "\n") {
                shown.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                shown.append(scalar)
            }
        }
        return String(shown)
    }

    /// The pattern `openapi.yaml` gives a text a person reads (a title, a device's name): no control
    /// character anywhere (U+0000 among them), and one character outside ECMA-262's `\s`, as
    /// `BlankText.pattern` asks (its `\t\n\v\f\r` and U+0085 are controls already).
    public static let textPattern = #"^[^\u0000-\u001f\u007f-\u009f]*[^\u0000-\u0020\u007f-\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff][^\u0000-\u001f\u007f-\u009f]*$"#
}

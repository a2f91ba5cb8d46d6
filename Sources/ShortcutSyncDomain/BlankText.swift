import Foundation

/// What every text field must be: not blank (DESIGN §2) and free of U+0000, which PostgreSQL
/// cannot store in `text` or `jsonb` (it was a 500 before).
///
/// "Blank" is a string of nothing but the characters of ECMA-262's `\s`, the set JSON Schema's
/// `pattern` uses. The set is written out rather than taken from `Character.isWhitespace` or
/// Foundation's `.whitespacesAndNewlines`, which differ from it (U+0085 is whitespace there and
/// not in `\s`; U+FEFF is in `\s` and not there), so that a string passes here exactly when it
/// matches `pattern`, which `openapi.yaml` gives every text field. The empty string is blank
/// too (the length limits name it first).
public enum BlankText {
    /// No U+0000 anywhere, and at least one character outside `\s`, with `\s` spelled out because
    /// regex dialects disagree on it (Python's `re` counts U+001C–U+001F and U+0085, ECMA does not).
    public static let pattern = #"^[^\u0000]*[^\u0000\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff][^\u0000]*$"#

    /// Whether `value` holds no character outside ECMA-262's `\s`.
    public static func isBlank(_ value: some StringProtocol) -> Bool {
        value.unicodeScalars.allSatisfy(isBlank)
    }

    /// ECMA-262 `WhiteSpace` (TAB, VT, FF, ZWNBSP and the `Zs` category) and `LineTerminator`
    /// (LF, CR, LS, PS).
    public static func isBlank(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x20, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
            true
        default:
            false
        }
    }

    /// Whether `value` holds U+0000, which PostgreSQL refuses in `text` and `jsonb`.
    /// U+0000 is the byte 0 in UTF-8, and no other character's bytes hold a 0.
    public static func containsNull(_ value: some StringProtocol) -> Bool {
        value.utf8.contains(0)
    }

    /// How many code points `value` has and whether one is U+0000, in one pass over its UTF-8:
    /// a code point is a byte that does not continue one (10xxxxxx), and U+0000 is the byte 0.
    /// Read from the string's own buffer where it has one: iterating `utf8` cost the validator
    /// about a fifth more instructions (callgrind).
    public static func codePointsAndNull(_ value: String) -> (count: Int, hasNull: Bool) {
        func scan(_ bytes: some Sequence<UInt8>) -> (count: Int, hasNull: Bool) {
            var count = 0
            var hasNull = false
            for byte in bytes {
                if byte & 0xC0 != 0x80 { count += 1 }
                if byte == 0 { hasNull = true }
            }
            return (count, hasNull)
        }
        return value.utf8.withContiguousStorageIfAvailable { scan($0) } ?? scan(value.utf8)
    }
}

import Foundation

/// What the fold reads of a JSON text by hand (the fields of the events that are not donations,
/// `FoldLogCoding.Extras`), where Foundation's `JSONDecoder` took some 3 % of a rebuild's
/// samples: strings, arrays of strings, `true`, `false` and `null`, between JSON's whitespace.
/// Strict: a bad escape, a lone surrogate or a control character in a string is nil.
struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Whether nothing but whitespace is left.
    mutating func atEnd() -> Bool {
        skipWhitespace()
        return index == bytes.count
    }

    /// Whether the next thing is `byte` (after whitespace), which is then read.
    mutating func take(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// Whether the next byte, whitespace or not, is `byte`, which is then read: inside a string.
    private mutating func next(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// Whether the next thing is `null`, which is then read.
    mutating func null() -> Bool { literal("null") }

    /// A `true` or a `false`; nil for anything else.
    mutating func bool() -> Bool? {
        literal("true") ? true : literal("false") ? false : nil
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        skipWhitespace()
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
        index += count
        return true
    }

    /// An array of strings; nil for anything else.
    mutating func stringArray() -> [String]? {
        guard take(UInt8(ascii: "[")) else { return nil }
        var strings: [String] = []
        if !take(UInt8(ascii: "]")) {
            repeat {
                guard let string = string() else { return nil }
                strings.append(string)
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "]")) else { return nil }
        }
        return strings
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// A string. Its runs between escapes are copied as they are: the text is valid UTF-8 and
    /// cut at ASCII quotes and backslashes only, so each run is too. Without an escape (nearly
    /// always) the string is made from its bytes at once.
    mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        var start = index, escaped = false
        var decoded: [UInt8] = []
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                let run = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                guard escaped else { return String(decoding: run, as: UTF8.self) }
                decoded.append(contentsOf: run)
                return String(decoding: decoded, as: UTF8.self)
            case UInt8(ascii: "\\"):
                decoded.append(contentsOf: bytes[start..<index])
                index += 1
                escaped = true
                guard escape(into: &decoded) else { return nil }
                start = index
            case 0..<0x20:
                return nil
            default:
                index += 1
            }
        }
        return nil
    }

    /// The character of an escape whose backslash was read, appended to `decoded`.
    private mutating func escape(into decoded: inout [UInt8]) -> Bool {
        guard index < bytes.count else { return false }
        let escape = bytes[index]
        index += 1
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
        case UInt8(ascii: "b"): decoded.append(0x08)
        case UInt8(ascii: "f"): decoded.append(0x0C)
        case UInt8(ascii: "n"): decoded.append(0x0A)
        case UInt8(ascii: "r"): decoded.append(0x0D)
        case UInt8(ascii: "t"): decoded.append(0x09)
        case UInt8(ascii: "u"):
            guard let scalar = unicodeScalar() else { return false }
            decoded.append(contentsOf: String(Character(scalar)).utf8)
        default: return false
        }
        return true
    }

    /// The scalar of a `\u` escape whose `u` was read, with the low half of a surrogate pair.
    private mutating func unicodeScalar() -> Unicode.Scalar? {
        guard let high = hexQuad() else { return nil }
        switch high {
        case 0xD800...0xDBFF:
            guard next(UInt8(ascii: "\\")), next(UInt8(ascii: "u")), let low = hexQuad(), (0xDC00...0xDFFF).contains(low) else { return nil }
            return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
        case 0xDC00...0xDFFF: return nil
        default: return Unicode.Scalar(high)
        }
    }

    private mutating func hexQuad() -> UInt32? {
        guard index + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }
}

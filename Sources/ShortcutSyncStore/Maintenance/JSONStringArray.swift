import Foundation

/// A JSON array of strings (`["a", "b\"c"]`), as PostgreSQL writes a jsonb array as text: read
/// by hand for the fold's read of the log (`FoldLogCoding`), where Foundation's `JSONDecoder`
/// took some 3 % of a rebuild's samples for the deletions' identifiers and the reports' apps.
/// Strict: anything but an array of strings (a number, a nested array, a bad escape, a lone
/// surrogate, text after the array) is nil.
enum JSONStringArray {
    static func parse(_ text: String) -> [String]? {
        var text = text
        return text.withUTF8 { bytes in
            var reader = Reader(bytes: bytes)
            return reader.array()
        }
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        mutating func array() -> [String]? {
            skipWhitespace()
            guard take(UInt8(ascii: "[")) else { return nil }
            var strings: [String] = []
            skipWhitespace()
            if !take(UInt8(ascii: "]")) {
                repeat {
                    skipWhitespace()
                    guard let string = string() else { return nil }
                    strings.append(string)
                    skipWhitespace()
                } while take(UInt8(ascii: ","))
                guard take(UInt8(ascii: "]")) else { return nil }
            }
            skipWhitespace()
            return index == bytes.count ? strings : nil
        }

        private mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        private mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        /// A string from its opening quote: its bytes whole when it has no escape (nearly always).
        private mutating func string() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
                guard bytes[index] >= 0x20 else { return nil }
                index += 1
            }
            guard index < bytes.count else { return nil }
            // The text is valid UTF-8 and cut at ASCII quotes and backslashes only: so is each part.
            if bytes[index] == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index - 1]), as: UTF8.self)
            }
            var decoded = Array(bytes[start..<index])
            while bytes[index] == UInt8(ascii: "\\") {
                index += 1
                guard index < bytes.count else { return nil }
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
                    guard let scalar = unicodeScalar() else { return nil }
                    decoded.append(contentsOf: String(Character(scalar)).utf8)
                default: return nil
                }
                while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
                    guard bytes[index] >= 0x20 else { return nil }
                    decoded.append(bytes[index])
                    index += 1
                }
                guard index < bytes.count else { return nil }
            }
            index += 1  // the closing quote
            return String(decoding: decoded, as: UTF8.self)
        }

        /// The scalar of a `\u` escape whose `u` was read, with the low half of a surrogate pair.
        private mutating func unicodeScalar() -> Unicode.Scalar? {
            guard let high = hexQuad() else { return nil }
            switch high {
            case 0xD800...0xDBFF:
                guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")), let low = hexQuad(), (0xDC00...0xDFFF).contains(low) else { return nil }
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
}

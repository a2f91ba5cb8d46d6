import Foundation

struct JSONParser {
    static let maxDepth = 512

    private let bytes: UnsafeRawBufferPointer
    private var index = 0
    private var depth = 0

    /// The document in `bytes`.
    static func parse(_ bytes: UnsafeRawBufferPointer) throws(JSONSyntaxError) -> JSONNode {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.value()
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.error("unexpected text after the value") }
        return value
    }

    private init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    private func error(_ reason: String) -> JSONSyntaxError {
        JSONSyntaxError(offset: index, reason: reason)
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func expect(_ literal: StaticString, _ node: JSONNode) throws(JSONSyntaxError) -> JSONNode {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw error("unexpected end of the document") }
        for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] {
            throw error("unexpected character")
        }
        index += count
        return node
    }

    private mutating func value() throws(JSONSyntaxError) -> JSONNode {
        guard let byte = current else { throw error("unexpected end of the document") }
        switch byte {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw error("unexpected character")
        }
    }

    private mutating func nest() throws(JSONSyntaxError) {
        depth += 1
        guard depth <= Self.maxDepth else { throw error("nested more than \(Self.maxDepth) levels deep") }
    }

    private mutating func object() throws(JSONSyntaxError) -> JSONNode {
        try nest()
        index += 1
        var members: [JSONMember] = []
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(members)
        }
        // A name given twice is refused: readers disagree on which value counts (JSONDecoder takes
        // the first, JSONSerialization and PostgreSQL's jsonb the last), so no reading is right.
        var names = MemberNames()
        while true {
            guard current == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let start = index
            let key = try memberName()
            guard names.insert(key) else {
                index = start
                throw error("a member name is given twice")
            }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            members.append(JSONMember(key: key, value: try value()))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
            case UInt8(ascii: "}"):
                index += 1
                depth -= 1
                return .object(members)
            default:
                throw error("expected ',' or '}'")
            }
        }
    }

    private mutating func array() throws(JSONSyntaxError) -> JSONNode {
        try nest()
        index += 1
        var elements: [JSONNode] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            elements.append(try value())
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
            case UInt8(ascii: "]"):
                index += 1
                depth -= 1
                return .array(elements)
            default:
                throw error("expected ',' or ']'")
            }
        }
    }

    /// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, returned as written.
    private mutating func number() throws(JSONSyntaxError) -> String {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, isDigit(first) else { throw error("expected a digit") }
        index += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if current == UInt8(ascii: ".") {
            index += 1
            guard let digit = current, isDigit(digit) else { throw error("expected a digit after '.'") }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let digit = current, isDigit(digit) else { throw error("expected a digit in the exponent") }
            skipDigits()
        }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while let byte = current, isDigit(byte) { index += 1 }
    }

    /// A string's contents; `index` is on its opening quote.
    private mutating func string() throws(JSONSyntaxError) -> String {
        let start = index + 1
        if let (text, ascii) = try plainString() { return try validated(text, ascii: ascii) }
        return try unescapedString(from: start)
    }

    /// A member name: the reader's own string for a name it knows (`KnownNames`), so that the
    /// names of every event are neither allocated again nor compared byte by byte when looked up.
    private mutating func memberName() throws(JSONSyntaxError) -> String {
        let start = index + 1
        if let (text, ascii) = try plainString() {
            if ascii, let known = KnownNames.shared.name(text) { return known }
            return try validated(text, ascii: ascii)
        }
        return try unescapedString(from: start)
    }

    /// The common case, a string without escapes: its bytes and whether they are all ASCII,
    /// with `index` after its closing quote. Nil, with `index` on the first backslash, when it has an
    /// escape. Eight bytes are looked at a time while none of them ends the string, starts an
    /// escape or is a control character (a string's bytes are most of a push body).
    private mutating func plainString() throws(JSONSyntaxError) -> (UnsafeRawBufferPointer, ascii: Bool)? {
        index += 1
        let start = index
        var high: UInt64 = 0
        while index + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            guard !Self.hasSpecialByte(word) else { break }
            high |= word
            index += 8
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                index += 1
                return (text, high & 0x8080_8080_8080_8080 == 0)
            }
            if byte == UInt8(ascii: "\\") { return nil }
            if byte < 0x20 { throw error("a control character in a string") }
            high |= UInt64(byte)
            index += 1
        }
        throw error("unexpected end of the document in a string")
    }

    /// Whether any byte of `word` is a quote, a backslash or below 0x20: the word-wide tests for
    /// "a byte is zero" and "a byte is below n" (n ≤ 0x80), which are exact as a yes or no.
    @inline(__always)
    private static func hasSpecialByte(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ x: UInt64) -> Bool { (x &- ones) & ~x & highs != 0 }
        let below20 = (word &- 0x20 &* ones) & ~word & highs != 0
        return below20 || hasZeroByte(word ^ (0x22 &* ones)) || hasZeroByte(word ^ (0x5C &* ones))
    }

    /// A string with escapes, from `start` (after its opening quote) to its closing quote; `index` is
    /// on its first backslash.
    private mutating func unescapedString(from start: Int) throws(JSONSyntaxError) -> String {
        var unescaped = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let string = unescaped.withUnsafeBytes({ String(exactUTF8: $0, ascii: false) }) else {
                    throw error("a string that is not valid UTF-8")
                }
                return string
            case UInt8(ascii: "\\"):
                index += 1
                try escape(into: &unescaped)
            case 0..<0x20:
                throw error("a control character in a string")
            default:
                unescaped.append(byte)
                index += 1
            }
        }
        throw error("unexpected end of the document in a string")
    }

    private func validated(_ text: UnsafeRawBufferPointer, ascii: Bool) throws(JSONSyntaxError) -> String {
        guard let string = String(exactUTF8: text, ascii: ascii) else { throw error("a string that is not valid UTF-8") }
        return string
    }

    /// One escape after its backslash, appended as UTF-8.
    private mutating func escape(into out: inout [UInt8]) throws(JSONSyntaxError) {
        guard let byte = current else { throw error("unexpected end of the document in a string") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(byte)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800...0xDBFF).contains(scalar) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error("a high surrogate without its low surrogate")
                }
                index += 2
                let low = try hex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw error("a high surrogate without its low surrogate") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw error("a low surrogate without its high surrogate")
            }
            out.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
        default:
            throw error("an unknown escape")
        }
    }

    private mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("unexpected end of the document in a \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = bytes[index].hexDigitValue else { throw error("expected four hex digits after \\u") }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }
}

/// The member names of one object so far: a short list while it is short, a set past that, so
/// that an object of many members costs no more than one of few per member.
private struct MemberNames {
    private var few: [String] = []
    private var many: Set<String>?

    /// Adds `name`; false when the object has it already.
    mutating func insert(_ name: String) -> Bool {
        if many != nil { return many!.insert(name).inserted }
        let length = name.utf8.count
        if few.contains(where: { $0.utf8.count == length && $0 == name }) { return false }
        few.append(name)
        if few.count > 16 { many = Set(few) }
        return true
    }
}

extension String {
    /// The string whose UTF-8 is exactly `bytes`, or nil when they are not valid UTF-8; `ascii`
    /// says that no byte is above 0x7F (the reader knows it from its scan).
    ///
    /// `String(validating:as:)` says the same, but goes through the standard library's generic
    /// validator, which looked up type metadata for every string: 5 % of the service's CPU in a
    /// profile of 100-event pushes. Decoding is specialised for a buffer of bytes; it repairs
    /// invalid UTF-8 with U+FFFD, so the bytes decoded differ from the input exactly when the
    /// input was not valid.
    init?(exactUTF8 bytes: UnsafeRawBufferPointer, ascii: Bool) {
        var string = String(decoding: bytes, as: UTF8.self)
        if !ascii {
            guard string.withUTF8({ decoded in decoded.count == bytes.count && decoded.elementsEqual(bytes) }) else { return nil }
        }
        self = string
    }
}

/// The member names the push reader looks up (`PushJSON`, and a donation's fields as
/// `Donation.visitFields` declares them), each kept as one `String`.
struct KnownNames: Sendable {
    static let shared = KnownNames()

    /// The names by their length in bytes: each name's bytes beside the name.
    private let byLength: [[(bytes: [UInt8], name: String)]]

    private init() {
        let names = ["events", "id", "seq", "hlc", "wallMillis", "counter", "type", "bundleId", "identifiers", "groupIdentifier",
                     "all", "voiceShortcutId", "phrase", "identifier", "title", "installed", "scope", "deviceId", "paused"]
            + Donation.fields.map(\.name)
        var byLength: [[(bytes: [UInt8], name: String)]] = Array(repeating: [], count: (names.map(\.utf8.count).max() ?? 0) + 1)
        for name in Set(names) { byLength[name.utf8.count].append((Array(name.utf8), name)) }
        self.byLength = byLength
    }

    /// The known name whose bytes are `text`, if there is one.
    func name(_ text: UnsafeRawBufferPointer) -> String? {
        guard !text.isEmpty, text.count < byLength.count else { return nil }
        for known in byLength[text.count] where known.bytes.withUnsafeBytes({ memcmp($0.baseAddress!, text.baseAddress!, text.count) == 0 }) {
            return known.name
        }
        return nil
    }
}

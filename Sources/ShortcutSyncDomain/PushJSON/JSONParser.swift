import Foundation

struct JSONParser {
    static let maxDepth = 512

    private let bytes: UnsafeRawBufferPointer
    private var index = 0
    private var depth = 0
    private var tape = JSONTape()

    /// The document in `bytes`, as a tape over them.
    static func parse(_ bytes: UnsafeRawBufferPointer) throws(JSONSyntaxError) -> JSONTape {
        // Offsets are kept in 32 bits; a push body is limited far below that.
        guard bytes.count < Int(Int32.max) else { throw JSONSyntaxError(offset: 0, reason: "a document of 2 GiB or more") }
        var parser = JSONParser(bytes: bytes)
        // About one value for every ten bytes of a push body.
        parser.tape.tokens.reserveCapacity(bytes.count / 8 + 4)
        parser.skipWhitespace()
        try parser.value()
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.error("unexpected text after the value") }
        return parser.tape
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

    private mutating func append(_ kind: JSONToken.Kind, _ lower: Int, _ upper: Int, unescaped: Bool = false) {
        tape.tokens.append(JSONToken(kind: kind, isUnescaped: unescaped, lower: Int32(truncatingIfNeeded: lower), upper: Int32(truncatingIfNeeded: upper)))
    }

    private mutating func expect(_ literal: StaticString, _ kind: JSONToken.Kind) throws(JSONSyntaxError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw error("unexpected end of the document") }
        for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] {
            throw error("unexpected character")
        }
        index += count
        append(kind, 0, 0)
    }

    private mutating func value() throws(JSONSyntaxError) {
        guard let byte = current else { throw error("unexpected end of the document") }
        switch byte {
        case UInt8(ascii: "{"): try object()
        case UInt8(ascii: "["): try array()
        case UInt8(ascii: "\""): try string()
        case UInt8(ascii: "t"): try expect("true", .true)
        case UInt8(ascii: "f"): try expect("false", .false)
        case UInt8(ascii: "n"): try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
        default: throw error("unexpected character")
        }
    }

    private mutating func nest() throws(JSONSyntaxError) {
        depth += 1
        guard depth <= Self.maxDepth else { throw error("nested more than \(Self.maxDepth) levels deep") }
    }

    /// Opens a container's token, to be closed by `close` once its values follow it.
    private mutating func open(_ kind: JSONToken.Kind) throws(JSONSyntaxError) -> Int {
        try nest()
        index += 1
        append(kind, 0, 0)
        return tape.tokens.count - 1
    }

    private mutating func close(_ token: Int, count: Int) {
        index += 1
        depth -= 1
        tape.tokens[token].lower = Int32(truncatingIfNeeded: count)
        tape.tokens[token].upper = Int32(truncatingIfNeeded: tape.tokens.count)
    }

    private mutating func object() throws(JSONSyntaxError) {
        let token = try open(.object)
        var count = 0
        skipWhitespace()
        if current == UInt8(ascii: "}") { return close(token, count: count) }
        // A name given twice is refused: readers disagree on which value counts (JSONDecoder takes
        // the first, JSONSerialization and PostgreSQL's jsonb the last), so no reading is right.
        var names = MemberNames(object: token)
        while true {
            guard current == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let start = index
            try string()
            guard names.insert(tape.tokens.count - 1, of: self) else {
                index = start
                throw error("a member name is given twice")
            }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            try value()
            count += 1
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
            case UInt8(ascii: "}"):
                return close(token, count: count)
            default:
                throw error("expected ',' or '}'")
            }
        }
    }

    private mutating func array() throws(JSONSyntaxError) {
        let token = try open(.array)
        var count = 0
        skipWhitespace()
        if current == UInt8(ascii: "]") { return close(token, count: count) }
        while true {
            try value()
            count += 1
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
            case UInt8(ascii: "]"):
                return close(token, count: count)
            default:
                throw error("expected ',' or ']'")
            }
        }
    }

    /// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, kept as written.
    private mutating func number() throws(JSONSyntaxError) {
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
        append(.number, start, index)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while let byte = current, isDigit(byte) { index += 1 }
    }

    /// A string, `index` on its opening quote. Its text is the document's own bytes unless it
    /// has escapes. Eight bytes are looked at a time while none of them ends the string, starts
    /// an escape or is a control character (a string's bytes are most of a push body); its UTF-8
    /// is checked only when a byte is above 0x7F.
    private mutating func string() throws(JSONSyntaxError) {
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
                if high & 0x8080_8080_8080_8080 != 0, !UTF8Check.isValid(UnsafeRawBufferPointer(rebasing: bytes[start..<index])) {
                    throw error("a string that is not valid UTF-8")
                }
                append(.string, start, index)
                index += 1
                return
            }
            if byte == UInt8(ascii: "\\") { return try unescapedString(from: start) }
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

    /// A string with escapes, from `start` (after its opening quote) to its closing quote, its
    /// text unescaped into the tape; `index` is on its first backslash.
    private mutating func unescapedString(from start: Int) throws(JSONSyntaxError) {
        let lower = tape.unescaped.count
        tape.unescaped.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                let valid = tape.unescaped.withUnsafeBytes { UTF8Check.isValid(UnsafeRawBufferPointer(rebasing: $0[lower...])) }
                guard valid else { throw error("a string that is not valid UTF-8") }
                append(.string, lower, tape.unescaped.count, unescaped: true)
                return
            case UInt8(ascii: "\\"):
                index += 1
                try escape()
            case 0..<0x20:
                throw error("a control character in a string")
            default:
                tape.unescaped.append(byte)
                index += 1
            }
        }
        throw error("unexpected end of the document in a string")
    }

    /// One escape after its backslash, its character appended to the tape's unescaped text.
    private mutating func escape() throws(JSONSyntaxError) {
        guard let byte = current else { throw error("unexpected end of the document in a string") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): tape.unescaped.append(byte)
        case UInt8(ascii: "b"): tape.unescaped.append(0x08)
        case UInt8(ascii: "f"): tape.unescaped.append(0x0C)
        case UInt8(ascii: "n"): tape.unescaped.append(0x0A)
        case UInt8(ascii: "r"): tape.unescaped.append(0x0D)
        case UInt8(ascii: "t"): tape.unescaped.append(0x09)
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
            tape.unescaped.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
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

/// The member names of one object so far, read from the tape itself (its first name is the token
/// after the object's own, and each next one follows the value before it), so that keeping them
/// allocates nothing: a short walk while they are few, a set past that, so that an object of
/// many members costs no more than one of few per member. Two names are the same when their
/// bytes are, once unescaped. A name whose length, first and last byte no name before it shares
/// (a bit of `seen`, as a one-word Bloom filter) is new without a walk: most names of an event
/// are.
private struct MemberNames {
    /// The token of the object's first name.
    private let first: Int
    private var count = 0
    private var seen: UInt64 = 0
    private var many: Set<[UInt8]>?

    init(object: Int) {
        first = object + 1
    }

    /// Adds the name at `token`, the object's newest; false when the object has it already.
    mutating func insert(_ token: Int, of parser: JSONParser) -> Bool {
        if many != nil { return parser.withText(of: token) { many!.insert(Array($0)).inserted } }
        let bit: UInt64 = parser.withText(of: token) { text in
            let mix = text.count &* 31 &+ Int(text.first ?? 0) &* 7 &+ Int(text.last ?? 0)
            return 1 << UInt64(mix & 63)
        }
        if seen & bit != 0, names(on: parser).contains(where: { parser.sameText($0, token) }) { return false }
        seen |= bit
        if count == 16 {
            many = Set((names(on: parser) + [token]).map { name in parser.withText(of: name) { Array($0) } })
        }
        count += 1
        return true
    }

    /// The tokens of the names before the newest, first to last (its value is not read yet).
    private func names(on parser: JSONParser) -> some Sequence<Int> {
        sequence(first: first) { parser.name(after: $0) }.prefix(count)
    }
}

extension JSONParser {
    /// The token of the member name after the one at `name`, past its value.
    fileprivate func name(after name: Int) -> Int {
        tape.tokens[name + 1].next(at: name + 1)
    }

    /// `read` of the text of the string at `token`.
    fileprivate func withText<Result>(of token: Int, _ read: (UnsafeRawBufferPointer) -> Result) -> Result {
        let string = tape.tokens[token]
        let range = Int(string.lower)..<Int(string.upper)
        if string.isUnescaped { return tape.unescaped.withUnsafeBytes { read(UnsafeRawBufferPointer(rebasing: $0[range])) } }
        return read(UnsafeRawBufferPointer(rebasing: bytes[range]))
    }

    /// Whether the strings at two tokens have the same text.
    fileprivate func sameText(_ first: Int, _ second: Int) -> Bool {
        let one = tape.tokens[first], other = tape.tokens[second]
        guard one.upper - one.lower == other.upper - other.lower else { return false }
        return withText(of: first) { one in withText(of: second) { other in one.hasSameBytes(as: other) } }
    }
}

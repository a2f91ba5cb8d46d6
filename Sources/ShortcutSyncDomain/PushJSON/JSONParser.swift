

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
        var members: [(key: String, value: JSONNode)] = []
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
            let key = try string()
            guard names.insert(key) else {
                index = start
                throw error("a member name is given twice")
            }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            members.append((key, try value()))
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
        index += 1
        let start = index
        // The common case: no escapes, so the bytes are the string.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                index += 1
                return try validated(text)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("a control character in a string") }
            index += 1
        }
        guard index < bytes.count else { throw error("unexpected end of the document in a string") }
        var unescaped = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let string = unescaped.withUnsafeBytes({ String(validating: $0, as: UTF8.self) }) else {
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

    private func validated(_ text: UnsafeRawBufferPointer) throws(JSONSyntaxError) -> String {
        guard let string = String(validating: text, as: UTF8.self) else { throw error("a string that is not valid UTF-8") }
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
        if few.contains(name) { return false }
        few.append(name)
        if few.count > 16 { many = Set(few) }
        return true
    }
}

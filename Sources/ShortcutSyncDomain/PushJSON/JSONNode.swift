import Foundation

/// A JSON document parsed from UTF-8 bytes (`JSONParser`): every value of it in document order, a
/// container before what it holds, each a `JSONToken` over the bytes it was read from.
///
/// The push path reads events through it (`PushJSON`): in a profile of `bench push`,
/// Foundation's `JSONDecoder` took over half of the service's CPU. A tree of values (an array
/// for every object and list, a `String` for every string) then cost a 100-event push most of
/// its reading; the tokens are one array for the whole body, and a `String` is made only for a
/// value that an event keeps.
///
/// Strictness follows RFC 8259 as Foundation's decoder applies it: one value with whitespace
/// around it, no trailing commas, no control characters in strings, valid UTF-8 and valid
/// surrogate pairs, at most 512 levels of nesting.
struct JSONTape {
    /// The document's values in document order; the first is the document itself.
    var tokens: [JSONToken] = []
    /// The text of the strings that had escapes, unescaped.
    var unescaped: [UInt8] = []

    /// `read` of the document whose bytes the tape was parsed from.
    func withDocument<Result>(over bytes: UnsafeRawBufferPointer, _ read: (JSONDocument) -> Result) -> Result {
        tokens.withUnsafeBufferPointer { tokens in
            unescaped.withUnsafeBytes { unescaped in read(JSONDocument(bytes: bytes, unescaped: unescaped, tokens: tokens)) }
        }
    }
}

/// One value of a document.
struct JSONToken {
    enum Kind: UInt8 {
        case null, `true`, `false`, number, string, array, object
    }

    let kind: Kind
    /// A string whose text is in the tape's `unescaped` bytes rather than the document's.
    let isUnescaped: Bool
    /// A number's or a string's first byte (a string's after its quote); a container's count of
    /// elements or members.
    var lower: Int32
    /// A number's or a string's end byte (a string's on its closing quote); for a container, the
    /// index of the token after everything it holds.
    var upper: Int32

    /// The index of the token after this value and everything it holds, this token being at
    /// `index` (a container's once it is closed).
    func next(at index: Int) -> Int {
        switch kind {
        case .array, .object: Int(upper)
        default: index + 1
        }
    }
}

/// A parsed document over the bytes it was read from; valid while they are.
struct JSONDocument {
    let bytes: UnsafeRawBufferPointer
    let unescaped: UnsafeRawBufferPointer
    let tokens: UnsafeBufferPointer<JSONToken>

    var root: JSONNode { JSONNode(document: self, index: 0) }

    /// The index of the token after the value at `index` and everything it holds.
    func after(_ index: Int) -> Int {
        tokens[index].next(at: index)
    }
}

/// A value of a parsed document.
struct JSONNode {
    let document: JSONDocument
    let index: Int

    var kind: JSONToken.Kind { document.tokens[index].kind }

    /// A string's text (unescaped) or a number's, as UTF-8.
    var text: UnsafeRawBufferPointer {
        let token = document.tokens[index]
        let source = token.isUnescaped ? document.unescaped : document.bytes
        return UnsafeRawBufferPointer(rebasing: source[Int(token.lower)..<Int(token.upper)])
    }

    /// A string's value; nil for any other kind. Its UTF-8 was checked when it was parsed.
    var string: String? {
        kind == .string ? String(decoding: text, as: UTF8.self) : nil
    }

    /// Whether this string is `name`, byte for byte.
    func hasText(_ name: String) -> Bool {
        let utf8 = name.utf8
        return utf8.withContiguousStorageIfAvailable { text.hasSameBytes(as: UnsafeRawBufferPointer($0)) } ?? text.elementsEqual(utf8)
    }

    /// An array's elements, or an object's members as name, value, name, value…
    private var children: JSONChildren {
        let token = document.tokens[index]
        let count = token.kind == .object ? 2 * Int(token.lower) : Int(token.lower)
        return JSONChildren(document: document, position: index + 1, left: count)
    }

    /// An array's elements.
    var elements: JSONChildren { children }

    /// An object's members in the order written.
    var members: JSONMembers { JSONMembers(children: children) }

    /// How JSONDecoder names what it found instead.
    var kindName: String {
        switch kind {
        case .null: "null"
        case .true, .false: "bool"
        case .number: "number"
        case .string: "a string"
        case .array: "an array"
        case .object: "a dictionary"
        }
    }
}

/// The values a container holds, each after the one before and all it holds.
struct JSONChildren: Sequence, IteratorProtocol {
    let document: JSONDocument
    var position: Int
    var left: Int

    var count: Int { left }

    mutating func next() -> JSONNode? {
        guard left > 0 else { return nil }
        let node = JSONNode(document: document, index: position)
        position = document.after(position)
        left -= 1
        return node
    }
}

/// An object's members, each a name (a string node) and its value.
struct JSONMembers: Sequence, IteratorProtocol {
    var children: JSONChildren

    var count: Int { children.count / 2 }

    mutating func next() -> (name: JSONNode, value: JSONNode)? {
        guard let name = children.next(), let value = children.next() else { return nil }
        return (name, value)
    }
}

extension UnsafeRawBufferPointer {
    /// Whether `other` holds the same bytes: the reader's comparison of a member name with
    /// another (`JSONParser`) and with a name it looks up (`JSONNode.hasText`).
    func hasSameBytes(as other: UnsafeRawBufferPointer) -> Bool {
        count == other.count && (isEmpty || memcmp(baseAddress!, other.baseAddress!, count) == 0)
    }
}

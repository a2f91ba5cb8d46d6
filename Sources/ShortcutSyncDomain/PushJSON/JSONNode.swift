

/// A JSON document parsed from UTF-8 bytes into a tree, in one pass and without `Codable`.
///
/// The push path reads events through it (`PushJSON`): in a profile of `bench push`,
/// Foundation's `JSONDecoder` took over half of the service's CPU, much of it in building
/// coding paths for the trial decodes of `JSONValue` and in generic metadata lookups.
///
/// Strictness follows RFC 8259 as Foundation's decoder applies it: one value with whitespace
/// around it, no trailing commas, no control characters in strings, valid UTF-8 and valid
/// surrogate pairs, at most 512 levels of nesting.
enum JSONNode {
    case null
    case bool(Bool)
    /// A number as written; read as an integer or a double where it is used.
    case number(String)
    case string(String)
    case array([JSONNode])
    /// Members in the order written.
    case object([JSONMember])
}

/// A member of an object. A struct rather than a tuple: an array of tuples is destroyed through
/// the runtime's generic tuple witness, which cost as much as reading the members did.
struct JSONMember {
    let key: String
    let value: JSONNode
}

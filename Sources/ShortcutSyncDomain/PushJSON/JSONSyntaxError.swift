

/// Why bytes are not a JSON document, and at which byte offset.
struct JSONSyntaxError: Error, CustomStringConvertible {
    var offset: Int
    var reason: String
    var description: String { "\(reason) at byte \(offset)" }
}

import Foundation

/// One thing wrong with the input, located by a JSON pointer (RFC 6901) into it.
public struct FieldError: Sendable, Hashable, Codable, CustomStringConvertible {
    public var pointer: String
    public var detail: String

    public init(pointer: String, detail: String) {
        self.pointer = pointer
        self.detail = detail
    }

    public var description: String { "\(pointer.isEmpty ? "/" : pointer): \(detail)" }

    /// The same error, seen from an enclosing document: `/seq` under `/events/3` is `/events/3/seq`.
    public func nested(under prefix: String) -> FieldError {
        FieldError(pointer: prefix + pointer, detail: detail)
    }
}

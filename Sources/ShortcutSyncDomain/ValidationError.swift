import Foundation

/// Input that breaks the contract's limits; nothing of it may be stored.
public struct ValidationError: Error, Sendable, Hashable, CustomStringConvertible {
    public var errors: [FieldError]

    public init(_ errors: [FieldError]) {
        self.errors = errors
    }

    public var description: String {
        "invalid input: " + errors.map(\.description).joined(separator: "; ")
    }
}

import Foundation

/// A shortcut's identity within an account: the app and the identifier the app gave it.
public struct ShortcutID: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public var bundleId: String
    public var identifier: String

    public init(bundleId: String, identifier: String) {
        self.bundleId = bundleId
        self.identifier = identifier
    }

    public static func < (lhs: ShortcutID, rhs: ShortcutID) -> Bool {
        (lhs.bundleId, lhs.identifier) < (rhs.bundleId, rhs.identifier)
    }

    public var description: String { "\(bundleId)/\(identifier)" }
}

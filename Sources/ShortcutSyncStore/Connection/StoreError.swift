import Foundation
import ShortcutSyncDomain

/// Failures of the store itself, not of the caller's input.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    case migrationsMissing(String)
    case tooMuchContention(attempts: Int)
    case corruptRow(String)
    case connectionClosed

    public var description: String {
        switch self {
        case .connectionClosed: "the database closed the connection"
        case .migrationsMissing(let why): "the schema migrations cannot be loaded: \(why)"
        case .tooMuchContention(let attempts): "the append lost \(attempts) races in a row for the same account; try again"
        case .corruptRow(let why): "a stored row cannot be read: \(why)"
        }
    }
}

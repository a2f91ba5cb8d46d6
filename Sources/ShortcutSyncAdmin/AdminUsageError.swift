import Foundation
import Logging
import ShortcutSyncDomain
import ShortcutSyncStore

/// Bad input to an `admin` command: it changes nothing and exits with status 2.
public struct AdminUsageError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}

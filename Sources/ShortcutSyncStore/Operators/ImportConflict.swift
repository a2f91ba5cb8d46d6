import Foundation
import NIOCore
import PostgresNIO
import ShortcutSyncDomain

/// Why an import stored nothing: the file disagrees with what the database holds.
public struct ImportConflict: Error, Sendable, Hashable, CustomStringConvertible {
    /// The line of the file at fault.
    public var line: Int
    public var reason: String

    public init(line: Int, reason: String) {
        self.line = line
        self.reason = reason
    }

    public var description: String { "line \(line): \(reason)" }
}

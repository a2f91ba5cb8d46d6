import Foundation
import Logging
import ShortcutSyncDomain
import ShortcutSyncStore
import Synchronization

public struct BenchmarkError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

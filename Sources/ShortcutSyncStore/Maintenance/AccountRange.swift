import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// A range of account ids in uuid (byte) order: a rebuild folds ranges side by side.
public struct AccountRange: Sendable, Hashable {
    public var lowest: UUID
    /// The first id past the range; nil: to the end.
    public var end: UUID?

    public static let all = AccountRange(lowest: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), end: nil)

    /// `count` ranges of equal width that together hold every id.
    public static func split(into count: Int) -> [AccountRange] {
        let count = max(1, min(count, 256))
        func boundary(_ index: Int) -> UUID? {
            guard index < count else { return nil }
            let first = UInt8(index * 256 / count)
            return UUID(uuid: (first, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        }
        return (0..<count).map { AccountRange(lowest: boundary($0)!, end: boundary($0 + 1)) }
    }
}

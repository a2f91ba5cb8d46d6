import Foundation

/// An account whose rebuilt rows are behind its head: a rebuild's catch-up folds its events
/// `rebuiltVersion + 1 … version` into the rebuild tables.
public struct RebuildLag: Sendable, Hashable {
    public var accountId: UUID
    /// The account's version (its head) when read.
    public var version: Int64
    /// The version its rebuilt rows include; 0 when the rebuild tables hold none of them.
    public var rebuiltVersion: Int64

    public init(accountId: UUID, version: Int64, rebuiltVersion: Int64) {
        self.accountId = accountId
        self.version = version
        self.rebuiltVersion = rebuiltVersion
    }
}

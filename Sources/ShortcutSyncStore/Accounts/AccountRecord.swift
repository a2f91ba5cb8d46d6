import Foundation
import NIOCore
import PostgresNIO
import ShortcutSyncDomain

/// An account with its token's hash, as an export carries it.
public struct AccountRecord: Sendable, Hashable {
    public var accountId: UUID
    public var createdAt: Date
    public var tokenHash: [UInt8]

    public init(accountId: UUID, createdAt: Date, tokenHash: [UInt8]) {
        self.accountId = accountId
        self.createdAt = createdAt
        self.tokenHash = tokenHash
    }
}

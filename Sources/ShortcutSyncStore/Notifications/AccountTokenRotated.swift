import Foundation

/// What `AccountStore.rotateToken` announces with `NOTIFY` when it commits, so that every server
/// forgets the account's cached tokens at once: the old account token stops working everywhere.
public struct AccountTokenRotated: Sendable, Hashable, Codable {
    public static let channel = "shortcut_sync_account_token_rotated"

    public var accountId: UUID

    public init(accountId: UUID) {
        self.accountId = accountId
    }
}

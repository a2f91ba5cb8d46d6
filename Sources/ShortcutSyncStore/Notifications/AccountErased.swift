import Foundation

/// What `OperatorStore.erase` announces with `NOTIFY` when it commits, so that every server ends
/// the erased account's open streams and waiting pulls at once.
public struct AccountErased: Sendable, Hashable, Codable {
    public static let channel = "shortcut_sync_account_erased"

    public var accountId: UUID

    public init(accountId: UUID) {
        self.accountId = accountId
    }
}

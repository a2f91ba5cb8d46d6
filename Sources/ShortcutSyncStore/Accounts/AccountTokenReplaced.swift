/// The account token a sign-in carried is no longer the account's: rotated, or the account erased,
/// after the server checked it. Nothing was stored.
public struct AccountTokenReplaced: Error, Sendable, Hashable {
    public init() {}
}

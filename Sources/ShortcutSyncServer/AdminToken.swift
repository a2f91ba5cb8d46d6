import Foundation
import Synchronization

/// The admin token a server takes, as its hash, replaceable while the server runs: `SIGHUP` and
/// `admin rotate-admin-token`'s notification make the process read the token's file again
/// (`AdminTokenReloader` of `ShortcutSyncApp`), and the old token stops working at the next
/// request, without a restart.
public final class AdminToken: Sendable {
    private let hash: Mutex<[UInt8]>

    public init(_ token: String) {
        hash = Mutex(Tokens.hash(token))
    }

    /// Takes `token` from now on; true when it differs from the one taken until now.
    @discardableResult
    public func replace(with token: String) -> Bool {
        let new = Tokens.hash(token)
        return hash.withLock { hash in
            defer { hash = new }
            return hash != new
        }
    }

    /// Whether `token` is the admin token now (compared without leaking where it differs).
    public func matches(_ token: String) -> Bool {
        Tokens.matches(token, hash: hash.withLock { $0 })
    }
}

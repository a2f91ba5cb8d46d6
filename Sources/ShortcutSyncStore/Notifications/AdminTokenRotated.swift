import Foundation

/// What `admin rotate-admin-token` announces with `NOTIFY` once it has written a new admin token
/// to the token file: every server re-reads its own file at once, and the old token stops working
/// on every server that reads that file. The token is never in the notification (any session of
/// the database may listen, and may notify: hearing one only makes a server read its file again).
public struct AdminTokenRotated: Sendable, Hashable, Codable {
    public static let channel = "shortcut_sync_admin_token_rotated"

    public init() {}
}

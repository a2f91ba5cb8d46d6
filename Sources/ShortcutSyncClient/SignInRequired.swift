import Foundation

/// The service no longer knows this device (its token answered 401): it was signed out, or it
/// signed in after the backup the service's database was restored from. Syncing stops until the
/// app signs the device in again (`POST /v1/devices` with the account's token) and hands the new
/// device's transport to `ShortcutSyncClient.signIn(transport:)`, which sends what the old
/// identity's recovery window kept, and what waits, as the new device's.
public struct SignInRequired: Error, Sendable, Hashable, CustomStringConvertible {
    /// What the service said.
    public var detail: String

    public var description: String { "the service no longer knows this device; sign it in again (\(detail))" }
}

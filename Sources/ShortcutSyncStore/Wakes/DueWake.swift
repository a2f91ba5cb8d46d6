import Foundation
import ShortcutSyncDomain

/// A background wake a waker has claimed and now sends: the device, its token, the account
/// version it wakes the device for, and its failures so far (each doubles the next pause).
public struct DueWake: Sendable, Hashable {
    public var account: UUID
    public var device: UUID
    public var registration: PushTokenRegistration
    /// When the device registered this token: a `410` whose timestamp is older does not drop it.
    public var registeredAt: Date
    /// The account's version when the wake was claimed: once APNs takes it, the device is not
    /// woken again for this version or any before it.
    public var version: Int64
    /// Retryable refusals in a row before this attempt.
    public var failures: Int

    public init(account: UUID, device: UUID, registration: PushTokenRegistration, registeredAt: Date,
                version: Int64, failures: Int = 0) {
        self.account = account
        self.device = device
        self.registration = registration
        self.registeredAt = registeredAt
        self.version = version
        self.failures = failures
    }
}

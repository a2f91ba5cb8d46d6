import Foundation
import ShortcutSyncDomain

/// A background wake a waker has claimed and now sends: the device, its token, and what its row
/// said before the claim (so that a wake APNs could not take is put back as it was).
public struct DueWake: Sendable, Hashable {
    public var account: UUID
    public var device: UUID
    public var registration: PushTokenRegistration
    /// When the device registered this token: a `410` whose timestamp is older does not drop it.
    public var registeredAt: Date
    public var previousWakeAt: Date?
    public var previousWokenVersion: Int64
    /// Retryable refusals in a row before this attempt: the next pause doubles with each.
    public var failures: Int

    public init(account: UUID, device: UUID, registration: PushTokenRegistration, registeredAt: Date,
                previousWakeAt: Date?, previousWokenVersion: Int64, failures: Int = 0) {
        self.account = account
        self.device = device
        self.registration = registration
        self.registeredAt = registeredAt
        self.previousWakeAt = previousWakeAt
        self.previousWokenVersion = previousWokenVersion
        self.failures = failures
    }
}

import Foundation
import ShortcutSyncDomain

/// A device's push token and its wakes, as stored (operators see the token abbreviated only).
public struct PushTokenState: Sendable, Hashable {
    public var registration: PushTokenRegistration
    public var registeredAt: Date
    /// The account version of the device's latest pull.
    public var pulledVersion: Int64
    /// The account version of its latest wake.
    public var wokenVersion: Int64
    public var dueAt: Date?
    public var lastWakeAt: Date?
    /// Wakes APNs accepted.
    public var wakeCount: Int64
    /// Retryable refusals (429, 5xx) in a row.
    public var failures: Int
}

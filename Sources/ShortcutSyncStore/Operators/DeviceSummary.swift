import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// A device as operators list it: the record, and what it pushed and reported.
public struct DeviceSummary: Sendable, Hashable {
    public var device: DeviceRecord
    public var events: Int64
    public var lastAcceptedSeq: Int64
    public var lastEventAt: Date?
    /// The apps it reported last, as the live projections hold them; nil if it never reported.
    public var installedApps: [String]?
    /// The first 8 hex digits of its APNs token and "…", if it registered one (never the whole token).
    public var pushToken: String? = nil
    /// The token's APNs environment.
    public var pushEnvironment: String? = nil
    /// Its latest background wake, and how many APNs accepted.
    public var lastWakeAt: Date? = nil
    public var wakeCount: Int64 = 0
    /// The generation of the account token that signed it in (0021); nil for a device signed in
    /// before that migration, whose token is not known.
    public var signedInWith: Int? = nil
}

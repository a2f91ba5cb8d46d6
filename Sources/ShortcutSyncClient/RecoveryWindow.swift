import Foundation

/// How long, and how much of, what the service acknowledged a device keeps (`ClientStore`'s
/// `kept`), to give it back should the service lose it: a restored backup or a point-in-time
/// recovery of its database (docs/client-library.md, "Giving back what the database lost").
/// An event leaves the window when it was acknowledged longer ago than `duration`, or when newer
/// ones fill `maximumEvents` or `maximumBytes` (of the events' JSON), the oldest first.
public struct RecoveryWindow: Sendable, Hashable {
    public var duration: Duration
    public var maximumEvents: Int
    public var maximumBytes: Int

    public init(duration: Duration, maximumEvents: Int, maximumBytes: Int) {
        self.duration = duration
        self.maximumEvents = maximumEvents
        self.maximumBytes = maximumBytes
    }

    /// 30 days, at most 10,000 events and 4 MiB of them: a month of a heavy user's changes
    /// (docs/benchmarks.md measures what an event costs the device's file), longer than the
    /// service's backups are apart.
    public static let standard = RecoveryWindow(duration: .seconds(30 * 86_400), maximumEvents: 10_000, maximumBytes: 4 << 20)
}

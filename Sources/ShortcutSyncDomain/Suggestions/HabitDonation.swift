import Foundation

/// What one donation teaches the suggestions: the device it was done on, when (UTC), and the
/// device's offset from UTC then. Only uncovered donations with `eligibleForPrediction` teach.
public struct HabitDonation: Sendable, Hashable {
    public var deviceId: UUID
    public var wallMillis: Int64
    public var utcOffsetMinutes: Int

    public init(deviceId: UUID, wallMillis: Int64, utcOffsetMinutes: Int) {
        self.deviceId = deviceId
        self.wallMillis = wallMillis
        self.utcOffsetMinutes = utcOffsetMinutes
    }

    public var hourOfWeek: Int { HabitClock.hourOfWeek(wallMillis: wallMillis, utcOffsetMinutes: utcOffsetMinutes) }
    public var weight: WeightSum { HabitClock.weight(wallMillis: wallMillis) }
}

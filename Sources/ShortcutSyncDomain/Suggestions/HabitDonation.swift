import Foundation

/// What one donation teaches the suggestions: the device it was done on, when (UTC), and the
/// device's offset from UTC then, and the slot of its place token when it carried one
/// (`PlaceToken.slot`). Only uncovered donations with `eligibleForPrediction` teach.
public struct HabitDonation: Sendable, Hashable {
    public var deviceId: UUID
    public var wallMillis: Int64
    public var utcOffsetMinutes: Int
    public var place: UInt8?

    public init(deviceId: UUID, wallMillis: Int64, utcOffsetMinutes: Int, place: UInt8? = nil) {
        self.deviceId = deviceId
        self.wallMillis = wallMillis
        self.utcOffsetMinutes = utcOffsetMinutes
        self.place = place
    }

    /// As the fold reads it from a stored donation: its place token, if any, as its slot (a stored
    /// token that is not one, which the validator never let in, teaches no place).
    public init(deviceId: UUID, wallMillis: Int64, utcOffsetMinutes: Int, placeToken: String?) {
        self.init(deviceId: deviceId, wallMillis: wallMillis, utcOffsetMinutes: utcOffsetMinutes,
                  place: placeToken.flatMap { PlaceToken.slot(of: $0) })
    }

    public var hourOfWeek: Int { HabitClock.hourOfWeek(wallMillis: wallMillis, utcOffsetMinutes: utcOffsetMinutes) }

    /// The key its place's weight is kept under in the hour `hourOfWeek` (its own): slot and part of the week.
    func placeKey(hourOfWeek hour: Int) -> UInt16? {
        place.map { PlaceToken.key(slot: $0, part: PlaceToken.partOfWeek(hourOfWeek: hour)) }
    }
    public var weight: WeightSum { HabitClock.weight(wallMillis: wallMillis) }
}

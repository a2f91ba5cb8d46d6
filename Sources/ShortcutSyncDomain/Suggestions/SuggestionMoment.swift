import Foundation

/// The moment suggestions are asked for: `at` (UTC milliseconds) on a device whose offset from
/// UTC is `utcOffsetMinutes`, at the places `places` (valid `PlaceToken`s: where the device is
/// first, then the cells around it; none when the device holds no place key), and the device's
/// name for reasons ("on this iPhone").
public struct SuggestionMoment: Sendable, Hashable {
    public var deviceId: UUID
    public var atMillis: Int64
    public var utcOffsetMinutes: Int
    public var deviceLabel: String
    public var places: [String]

    public init(deviceId: UUID, atMillis: Int64, utcOffsetMinutes: Int = 0, deviceLabel: String = "device", places: [String] = []) {
        self.deviceId = deviceId
        self.atMillis = atMillis
        self.utcOffsetMinutes = utcOffsetMinutes
        self.deviceLabel = deviceLabel
        self.places = places
    }

    /// The slots of `places`: the first token's (here), and the others' that differ from it and
    /// from each other (near). Tokens that are not valid name no slot.
    public var placeSlots: (here: UInt8?, near: [UInt8]) {
        let slots = places.compactMap { PlaceToken.slot(of: $0) }
        guard let here = slots.first else { return (nil, []) }
        var seen: Set<UInt8> = [here]
        return (here, slots.dropFirst().filter { seen.insert($0).inserted })
    }

    public var hourOfWeek: Int { HabitClock.hourOfWeek(wallMillis: atMillis, utcOffsetMinutes: utcOffsetMinutes) }

    /// What a platform's devices are called in reasons.
    public static func label(platform: String) -> String {
        switch platform {
        case "iOS": "iPhone"
        case "iPadOS": "iPad"
        case "watchOS": "Watch"
        case "macOS": "Mac"
        case "visionOS": "Vision Pro"
        default: "device"
        }
    }
}

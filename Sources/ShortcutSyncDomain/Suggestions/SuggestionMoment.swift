import Foundation

/// The moment suggestions are asked for: `at` (UTC milliseconds) on a device whose offset from
/// UTC is `utcOffsetMinutes`, and the device's name for reasons ("on this iPhone").
public struct SuggestionMoment: Sendable, Hashable {
    public var deviceId: UUID
    public var atMillis: Int64
    public var utcOffsetMinutes: Int
    public var deviceLabel: String

    public init(deviceId: UUID, atMillis: Int64, utcOffsetMinutes: Int = 0, deviceLabel: String = "device") {
        self.deviceId = deviceId
        self.atMillis = atMillis
        self.utcOffsetMinutes = utcOffsetMinutes
        self.deviceLabel = deviceLabel
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

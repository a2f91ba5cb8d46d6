import Foundation
import ShortcutSyncAPI

/// The answer of `GET /v1/suggestions/habits`: what the service has learned of one shortcut, for
/// an app to show the person (a week of hours, each device's share).
public struct HabitsAnswer: Sendable, Hashable {
    public struct Hour: Sendable, Hashable {
        /// 0 = Monday 00:00–00:59 local time … 167 = Sunday 23:00–23:59.
        public var hourOfWeek: Int
        /// Decayed donations: each halved every three weeks.
        public var weight: Double
    }

    public struct Device: Sendable, Hashable {
        public var deviceId: UUID?
        public var name: String
        public var platform: String
        /// The donations it taught, undecayed, and their decayed weight.
        public var donations: Int64
        public var weight: Double
        public var hours: [Hour]
    }

    /// A place it was used at: the first two hex digits of its tokens (all the service keeps),
    /// which `PlaceKey.tokens(around:)` of the person's own places can be matched against.
    public struct Place: Sendable, Hashable {
        public var prefix: String
        public var weight: Double
    }

    public var bundleId: String
    public var identifier: String
    /// The moment the weights are decayed to, in epoch milliseconds.
    public var at: Int64
    /// Every device's hours together, only those with a weight.
    public var hours: [Hour]
    /// Seven rows (Monday first) of 24 shares of the heaviest hour (0…1), to draw.
    public var week: [[Double]]
    /// The devices that taught it, the heaviest first.
    public var devices: [Device]
    /// The places it was used at, every device together, the heaviest first.
    public var places: [Place]
}

extension HabitsAnswer {
    init(_ answer: Components.Schemas.LearnedHabits) {
        func hours(_ hours: [Components.Schemas.LearnedHour]) -> [Hour] {
            hours.map { Hour(hourOfWeek: Int($0.hourOfWeek), weight: $0.weight) }
        }
        self.init(bundleId: answer.bundleId, identifier: answer.identifier, at: answer.at, hours: hours(answer.hours), week: answer.week,
                  devices: answer.devices.map {
                      Device(deviceId: UUID(uuidString: $0.deviceId), name: $0.name, platform: $0.platform, donations: $0.donations,
                             weight: $0.weight, hours: hours($0.hours))
                  },
                  places: answer.places.map { Place(prefix: $0.prefix, weight: $0.weight) })
    }
}

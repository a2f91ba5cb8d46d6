import Foundation

/// What the service has learned of one shortcut (DESIGN §3), in a shape an app can draw: for each
/// device that taught it, and for all of them together, the weight of each hour of the person's
/// week, as decayed donations (each halved every three weeks) at the moment asked about. Only
/// hours with a weight are listed. It is what `SuggestionScorer` reads, nothing else: the sums
/// of the shortcut's uncovered donations eligible for prediction.
public struct LearnedHabits: Sendable, Hashable {
    public struct Hour: Sendable, Hashable, Codable {
        /// 0 = Monday 00:00–00:59 in the person's local time … 167 = Sunday 23:00–23:59.
        public var hourOfWeek: Int
        public var weight: Double
    }

    /// A place the shortcut was used at, as the first two hex digits of its tokens (the slot the
    /// service sums it in, `PlaceToken`): all a person's devices can match it to their own places.
    public struct Place: Sendable, Hashable, Codable {
        public var prefix: String
        public var weight: Double
    }

    public struct Device: Sendable, Hashable, Codable {
        public var deviceId: UUID
        /// The donations it taught, undecayed.
        public var donations: Int
        /// Their decayed weight in all.
        public var weight: Double
        public var hours: [Hour]
    }

    /// The devices that taught it, the heaviest first.
    public var devices: [Device]
    /// Every device's hours together.
    public var hours: [Hour]
    /// Every device's places together, the heaviest first (the donations that carried a place).
    public var places: [Place]
    /// The moment the weights are decayed to, in milliseconds since 1970 UTC.
    public var atMillis: Int64

    /// What `habits` hold, decayed to `atMillis`; nothing learned when nil or empty.
    public init(_ habits: ShortcutHabits?, atMillis: Int64) {
        self.atMillis = atMillis
        let scale = HabitClock.scale(atMillis: atMillis)
        var together = [Double](repeating: 0, count: HabitClock.hoursPerWeek)
        var atPlaces = [Double](repeating: 0, count: 256)
        var devices: [Device] = []
        for (device, sums) in (habits?.byDevice ?? [:]).sorted(by: { $0.key.isOrdered(before: $1.key) }) {
            let (hours, total) = sums.decayed(scale)
            for (hour, weight) in hours.enumerated() { together[hour] += weight }
            for (key, sum) in sums.places.sorted(by: { $0.key < $1.key }) {
                atPlaces[Int(PlaceToken.slot(ofKey: key))] += sum.doubleValue(timesTwoToThe: scale.exponent) / scale.divisor
            }
            devices.append(Device(deviceId: device, donations: sums.count, weight: total, hours: Self.listed(hours)))
        }
        self.devices = devices.sorted { ($0.weight, $1.deviceId.uuidString) > ($1.weight, $0.deviceId.uuidString) }
        hours = Self.listed(together)
        places = atPlaces.enumerated().compactMap { $0.element > 0 ? Place(prefix: PlaceToken.prefix(ofSlot: UInt8($0.offset)), weight: $0.element) : nil }
            .sorted { ($0.weight, $1.prefix) > ($1.weight, $0.prefix) }
    }

    private static func listed(_ weights: [Double]) -> [Hour] {
        weights.enumerated().compactMap { $0.element > 0 ? Hour(hourOfWeek: $0.offset, weight: $0.element) : nil }
    }

    /// The week as seven rows (Monday first) of 24 hours, each hour's weight over the heaviest
    /// hour's (0…1): for drawing it.
    public var week: [[Double]] {
        let heaviest = hours.map(\.weight).max() ?? 0
        var grid = [[Double]](repeating: [Double](repeating: 0, count: 24), count: 7)
        guard heaviest > 0 else { return grid }
        for hour in hours { grid[hour.hourOfWeek / 24][hour.hourOfWeek % 24] = hour.weight / heaviest }
        return grid
    }
}

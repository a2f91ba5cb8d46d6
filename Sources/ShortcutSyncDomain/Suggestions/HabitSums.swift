import Foundation

/// One device's sums for one donation group of a shortcut: how many eligible donations it holds
/// and their weights (`HabitClock`), in all, per hour of the week, and per place slot for those
/// that carried a place (DESIGN §3).
///
/// Every part is an integer (`WeightSum`), so the sums of a set of donations are the same bit
/// for bit whatever order they arrived in and whoever folded them: this is how equality is
/// defined for the suggestion state, as for the rest of the fold. Taking back what covered
/// donations added leaves exactly what the others add, and zero when none is left.
public struct HabitSums: Sendable, Hashable {
    /// Eligible donations summed.
    public private(set) var count: Int = 0
    /// The sum of their weights.
    public private(set) var total = WeightSum()
    /// The sum of their weights per hour of the week (0…167); hours without any are absent.
    public private(set) var hours: [Int: WeightSum] = [:]
    /// The sum of their weights per place slot and part of the week (`PlaceToken.key`), for the
    /// donations that carried a place; keys without any are absent. At most 256 × 8, whatever
    /// the history.
    public private(set) var places: [UInt16: WeightSum] = [:]

    public init() {}

    /// Sums read back from storage; hours outside 0…167 are dropped.
    public init(count: Int, total: WeightSum, hours: [Int: WeightSum], places: [UInt16: WeightSum] = [:]) {
        guard count > 0 else { return }
        self.count = count
        self.total = total
        self.hours = hours.filter { (0..<HabitClock.hoursPerWeek).contains($0.key) && !$0.value.isZero }
        self.places = places.filter { !$0.value.isZero }
    }

    /// Sums read back from their own stored form (`ShortcutHabits.bytes`), which holds hours
    /// 0…167 and places with non-zero sums only (the reader checks them): kept as they are.
    init(stored count: Int, total: WeightSum, hours: [Int: WeightSum], places: [UInt16: WeightSum] = [:]) {
        self.count = max(count, 0)
        guard self.count > 0 else { return }
        self.total = total
        self.hours = hours
        self.places = places
    }

    public var isEmpty: Bool { count == 0 }

    public mutating func add(_ donation: HabitDonation) {
        let weight = donation.weight, hour = donation.hourOfWeek
        count += 1
        total.add(weight)
        hours[hour, default: WeightSum()].add(weight)
        if let key = donation.placeKey(hourOfWeek: hour) { places[key, default: WeightSum()].add(weight) }
    }

    /// Takes back what `donation` added (a deletion covered it).
    public mutating func remove(_ donation: HabitDonation) {
        let weight = donation.weight
        count -= 1
        guard count > 0 else { self = HabitSums(); return }
        total.subtract(weight)
        let hour = donation.hourOfWeek
        hours[hour]?.subtract(weight)
        if hours[hour]?.isZero == true { hours[hour] = nil }
        if let key = donation.placeKey(hourOfWeek: hour) {
            places[key]?.subtract(weight)
            if places[key]?.isZero == true { places[key] = nil }
        }
    }

    /// Forgets where its donations were made in place slot `slot` (a forget of that place): they
    /// still count, in all and by hour, as if they had carried no place.
    public mutating func dropPlace(_ slot: UInt8) {
        guard !places.isEmpty else { return }
        for part in 0..<PlaceToken.partsOfWeek { places[PlaceToken.key(slot: slot, part: part)] = nil }
    }

    /// Adds another part's sums, or takes them back (`subtracting`) when they were added before.
    public mutating func add(_ other: HabitSums, subtracting: Bool = false) {
        guard other.count > 0 else { return }
        if subtracting {
            count -= other.count
            guard count > 0 else { self = HabitSums(); return }
            total.subtract(other.total)
            for (hour, sum) in other.hours {
                hours[hour]?.subtract(sum)
                if hours[hour]?.isZero == true { hours[hour] = nil }
            }
            for (place, sum) in other.places {
                places[place]?.subtract(sum)
                if places[place]?.isZero == true { places[place] = nil }
            }
        } else {
            count += other.count
            total.add(other.total)
            for (hour, sum) in other.hours { hours[hour, default: WeightSum()].add(sum) }
            for (place, sum) in other.places { places[place, default: WeightSum()].add(sum) }
        }
    }

    /// The sums as decayed donations as of the moment `scale` was made for: per hour, and in all.
    public func decayed(_ scale: (exponent: Int, divisor: Double)) -> (hours: [Double], total: Double) {
        var values = [Double](repeating: 0, count: HabitClock.hoursPerWeek)
        for (hour, sum) in hours { values[hour] = sum.doubleValue(timesTwoToThe: scale.exponent) / scale.divisor }
        return (values, total.doubleValue(timesTwoToThe: scale.exponent) / scale.divisor)
    }
}

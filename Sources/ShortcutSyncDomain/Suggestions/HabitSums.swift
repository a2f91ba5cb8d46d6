import Foundation

/// One device's decayed sums for one shortcut (or one donation group of it): how many eligible
/// donations it holds, their weights in all and per hour of the week (DESIGN §3).
///
/// Sums against a fixed epoch (`HabitClock`) make the state independent of arrival order up to
/// floating-point rounding: adding the same donations in another order gives sums that agree to
/// about 1e-15 relative. Where exactness matters most it is exact: `count` is an integer, and a
/// sum whose donations are all taken away again (a deletion covered them) is reset to exact
/// zero, so a forgotten habit leaves no residue at all.
public struct HabitSums: Sendable, Hashable {
    /// Eligible donations summed (exact).
    public private(set) var count: Int = 0
    /// The sum of their weights.
    public private(set) var total: Double = 0
    /// The sum of their weights per hour of the week; empty while `count` is 0.
    public private(set) var hours: [Double] = []

    public init() {}

    /// Sums read back from storage; `hours` must hold 168 values (otherwise it is taken as empty).
    public init(count: Int, total: Double, hours: [Double]) {
        self.count = max(count, 0)
        guard self.count > 0, hours.count == HabitClock.hoursPerWeek else { return }
        self.total = total
        self.hours = hours
    }

    public var isEmpty: Bool { count == 0 }

    public mutating func add(_ donation: HabitDonation) {
        add(hour: donation.hourOfWeek, weight: donation.weight, count: 1)
    }

    /// Takes back what `donation` added (its deletion covered it). Taking back the last one
    /// leaves exact zeros.
    public mutating func remove(_ donation: HabitDonation) {
        add(hour: donation.hourOfWeek, weight: -donation.weight, count: -1)
    }

    /// Adds another device's or group's sums (or takes them back with `sign` −1).
    public mutating func add(_ other: HabitSums, sign: Int = 1) {
        guard other.count > 0 else { return }
        count += sign * other.count
        guard count > 0 else { self = HabitSums(); return }
        if hours.isEmpty { hours = Array(repeating: 0, count: HabitClock.hoursPerWeek) }
        total += Double(sign) * other.total
        for hour in 0..<HabitClock.hoursPerWeek { hours[hour] += Double(sign) * other.hours[hour] }
    }

    private mutating func add(hour: Int, weight: Double, count change: Int) {
        count += change
        guard count > 0 else { self = HabitSums(); return }
        if hours.isEmpty { hours = Array(repeating: 0, count: HabitClock.hoursPerWeek) }
        total += weight
        hours[hour] += weight
    }

    /// Whether two sums are equal up to the rounding of their additions (relative 1e-9 of the
    /// larger total): what "the same state" means for sums folded in different orders.
    public func isClose(to other: HabitSums) -> Bool {
        guard count == other.count else { return false }
        guard count > 0 else { return true }
        let tolerance = 1e-9 * max(abs(total), abs(other.total))
        guard abs(total - other.total) <= tolerance else { return false }
        return zip(hours, other.hours).allSatisfy { abs($0 - $1) <= tolerance }
    }
}

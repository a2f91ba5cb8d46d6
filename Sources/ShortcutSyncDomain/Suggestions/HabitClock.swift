import Foundation

/// The clock of the suggestion sums (DESIGN §3): where a donation falls in the person's week,
/// and how much it weighs against a fixed epoch.
///
/// A donation in hour `h` after the epoch weighs `2^(h / 504)` (504 hours: three weeks), as an
/// exact integer: `table[h % 504] << (h / 504)`, the table holding `2^(r/504)` to 24 bits.
/// Because the epoch is fixed, every donation's weight is known when it arrives and a
/// shortcut's state is a plain sum of integers, exact whatever order its donations arrive in.
/// Dividing by the weight of the moment asked about turns the sum into "donations, each halved
/// every three weeks since it happened". Donations before the epoch (2025-01-01) weigh as if
/// at the epoch; they are years old by now.
public enum HabitClock {
    /// 2025-01-01T00:00:00Z.
    public static let epochMillis: Int64 = 1_735_689_600_000
    /// Three weeks: a habit not repeated for three weeks counts half.
    public static let halfLifeHours = 504
    public static let hoursPerWeek = 168
    static let millisPerHour: Int64 = 3_600_000
    /// Fractional bits of a weight (the table's precision).
    static let fractionBits = 24
    /// The latest hour weighed (about 100 years on); later ones weigh as that one. Keeps a
    /// weight far inside `Double` when it is scaled for scoring.
    static let lastHour = 1_700 * halfLifeHours / 10
    /// `2^(r / 504)` to 24 fractional bits, for r in 0..<504.
    static let table: [UInt64] = (0..<504).map { UInt64((exp2(Double($0) / 504) * exp2(Double(fractionBits))).rounded()) }

    /// Whole hours since the epoch, clamped to 0…`lastHour`.
    static func hour(wallMillis: Int64) -> Int {
        let (difference, overflow) = wallMillis.subtractingReportingOverflow(epochMillis)
        if overflow { return wallMillis < 0 ? 0 : lastHour }
        return Int(min(max(difference.floorDivided(by: millisPerHour), 0), Int64(lastHour)))
    }

    /// The exact weight of a donation at `wallMillis`.
    public static func weight(wallMillis: Int64) -> WeightSum {
        let hour = hour(wallMillis: wallMillis)
        return WeightSum(table[hour % halfLifeHours], shiftedLeftBy: hour / halfLifeHours)
    }

    /// What turns a sum of weights into decayed donations as of `atMillis`: `2^e / m`, with the
    /// exponent to pass to `WeightSum.doubleValue(timesTwoToThe:)` and the divisor.
    public static func scale(atMillis: Int64) -> (exponent: Int, divisor: Double) {
        let hour = hour(wallMillis: atMillis)
        return (-(hour / halfLifeHours), Double(table[hour % halfLifeHours]))
    }

    /// The hour of the person's week, 0 = Monday 00:00–00:59 local time … 167 = Sunday 23:00.
    /// Local time is `wallMillis + utcOffsetMinutes` (offsets are validated to −720…840).
    public static func hourOfWeek(wallMillis: Int64, utcOffsetMinutes: Int) -> Int {
        let local = wallMillis.addingSaturating(Int64(utcOffsetMinutes) * 60_000)
        let hours = local.floorDivided(by: millisPerHour)
        // 1970-01-01 was a Thursday: hour 0 of 1970 is hour 72 of its week.
        return Int(((hours % 168) + 168 + 72) % 168)
    }
}

extension Int64 {
    /// Division that rounds towards minus infinity (so times before 1970 fall in the right hour).
    func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}

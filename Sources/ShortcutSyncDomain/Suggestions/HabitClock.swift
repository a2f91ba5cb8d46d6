import Foundation

/// The clock of the suggestion sums (DESIGN §3): where a donation falls in the person's week,
/// and how much it weighs against a fixed epoch.
///
/// A donation at `t` weighs `2^((t − epoch) / halfLife)`. Because the epoch is fixed, every
/// donation's weight is known when it arrives and a shortcut's state is a plain sum, whatever
/// order the donations arrive in; dividing by the weight of the moment asked about
/// (`2^((at − epoch) / halfLife)`) turns the sum into "donations, each halved every three weeks
/// since it happened". The epoch is recent (2025-01-01) so that weights stay far inside
/// `Double`'s range: exponents are clamped to ±1000, i.e. from 1967 to about 2082.
public enum HabitClock {
    /// 2025-01-01T00:00:00Z.
    public static let epochMillis: Int64 = 1_735_689_600_000
    /// Three weeks: a habit not repeated for three weeks counts half.
    public static let halfLifeMillis: Int64 = 21 * 24 * 3_600_000
    public static let hoursPerWeek = 168
    static let millisPerHour: Int64 = 3_600_000

    /// The weight of a moment against the epoch (never zero, never infinite).
    public static func weight(wallMillis: Int64) -> Double {
        exp2(exponent(wallMillis: wallMillis))
    }

    /// How many half-lives `wallMillis` lies after the epoch, clamped to ±1000.
    public static func exponent(wallMillis: Int64) -> Double {
        let (difference, overflow) = wallMillis.subtractingReportingOverflow(epochMillis)
        let halfLives = overflow ? (wallMillis < 0 ? -1000 : 1000) : Double(difference) / Double(halfLifeMillis)
        return min(max(halfLives, -1000), 1000)
    }

    /// The hour of the person's week, 0 = Monday 00:00–00:59 local time … 167 = Sunday 23:00.
    /// Local time is `wallMillis + utcOffsetMinutes` (offsets are validated to −720…840).
    public static func hourOfWeek(wallMillis: Int64, utcOffsetMinutes: Int) -> Int {
        let local = wallMillis.addingSaturating(Int64(utcOffsetMinutes) * 60_000)
        let hours = local.floorDivided(by: millisPerHour)
        // 1970-01-01 was a Thursday: hour 0 of the epoch is hour 72 of its week.
        return Int((hours % 168 + 168 + 72) % 168)
    }
}

extension Int64 {
    /// Division that rounds towards minus infinity (so times before 1970 fall in the right hour).
    func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}

import Foundation

/// The knobs of the scoring (`SuggestionScorer`), chosen on the synthetic population of
/// `bench suggestions` (docs/benchmarks.md, "Suggestions"). Kept in one value so that the offline
/// evaluation can try others without touching the service.
public struct SuggestionModel: Sendable, Hashable {
    /// Weight of the hours next to the one asked about (±1, ±2): people are not punctual.
    public var neighbourHours: (Double, Double) = (0.3, 0.05)
    /// Weight of the same hour on the other days of the same kind (weekdays, weekend days),
    /// averaged: a weekday-morning routine is learned five times a week instead of once.
    public var sameHourOtherDays: Double = 1.5
    /// Weight of how often the shortcut is used at all (its decayed total spread over the week).
    public var overall: Double = 0.3
    /// How many of its own donations a device's habits are worth before the other devices'
    /// pattern stops mattering much: a new device starts from the others', and its own take over.
    public var otherDevices: Double = 10

    public init() {}

    public static func == (lhs: SuggestionModel, rhs: SuggestionModel) -> Bool {
        lhs.neighbourHours == rhs.neighbourHours && lhs.sameHourOtherDays == rhs.sameHourOtherDays
            && lhs.overall == rhs.overall && lhs.otherDevices == rhs.otherDevices
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(neighbourHours.0)
        hasher.combine(neighbourHours.1)
        hasher.combine(sameHourOtherDays)
        hasher.combine(overall)
        hasher.combine(otherDevices)
    }
}

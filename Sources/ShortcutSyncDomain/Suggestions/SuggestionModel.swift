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
    /// Weight of a shortcut's donations in the cells around the one the device is in, beside 1
    /// for those in its own cell: a cell's edge is not where a place ends.
    public var placeNeighbours: Double = 0.5
    /// The share of a shortcut's use a place is assumed to hold before anything is known of it:
    /// the place factor of a shortcut no placed donation taught.
    public var placePrior: Double = 0.1
    /// How many decayed donations that prior is worth: a shortcut used here once of once is not
    /// yet certain to be this place's.
    public var placePseudoCount: Double = 1
    /// How many decayed donations the shortcut's share here over the whole week is worth
    /// against its share here in the part of the week asked about: a part with few donations
    /// leans on the week's.
    public var placePartPseudoCount: Double = 2

    public init() {}

    public static func == (lhs: SuggestionModel, rhs: SuggestionModel) -> Bool {
        lhs.neighbourHours == rhs.neighbourHours && lhs.sameHourOtherDays == rhs.sameHourOtherDays
            && lhs.overall == rhs.overall && lhs.otherDevices == rhs.otherDevices
            && lhs.placeNeighbours == rhs.placeNeighbours && lhs.placePrior == rhs.placePrior
            && lhs.placePseudoCount == rhs.placePseudoCount && lhs.placePartPseudoCount == rhs.placePartPseudoCount
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(neighbourHours.0)
        hasher.combine(neighbourHours.1)
        hasher.combine(sameHourOtherDays)
        hasher.combine(overall)
        hasher.combine(otherDevices)
        hasher.combine(placeNeighbours)
        hasher.combine(placePrior)
        hasher.combine(placePseudoCount)
        hasher.combine(placePartPseudoCount)
    }
}

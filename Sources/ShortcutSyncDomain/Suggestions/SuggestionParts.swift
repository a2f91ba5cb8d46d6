import Foundation

/// The parts a suggestion's score adds up, in decayed donations as of the moment asked about:
/// what `admin suggestions` shows and what the `reason` is chosen from.
public struct SuggestionParts: Sendable, Hashable, Codable {
    /// This device's donations at this hour of the week and the hours next to it.
    public var thisHour: Double
    /// This device's donations at this hour on the other days of the same kind.
    public var sameHourOtherDays: Double
    /// The account's pattern at this moment (every device's donations, this one's too, as a share
    /// among the candidates): what a device that knows little yet starts from.
    public var otherDevices: Double
    /// How often this device uses the shortcut at all, lately.
    public var overall: Double
    /// What the place multiplies the sum of the others by (`SuggestionScorer`): the share of the
    /// shortcut's placed use that was here, smoothed. Nil when the ranking used no place: the
    /// device named none, or none of the candidates was ever used there.
    public var place: Double?

    public init(thisHour: Double = 0, sameHourOtherDays: Double = 0, otherDevices: Double = 0, overall: Double = 0, place: Double? = nil) {
        self.thisHour = thisHour
        self.sameHourOtherDays = sameHourOtherDays
        self.otherDevices = otherDevices
        self.overall = overall
        self.place = place
    }

    /// When, times where: the time parts' sum, times the place factor when there is one.
    public var score: Double { (thisHour + sameHourOtherDays + otherDevices + overall) * (place ?? 1) }
}

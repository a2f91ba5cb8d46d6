import Foundation

/// Ranks shortcuts for one moment on one device from their decayed sums (DESIGN §3): a pure
/// function of the sums (so of the event set) and the moment.
///
/// A shortcut's score estimates how likely this device is to use it now, in decayed donations:
/// - this device's donations at this hour of the week, and a little at the hours next to it;
/// - the same hour on the other days of the same kind (weekdays or weekend days), averaged:
///   routines repeat daily as often as weekly, and are learned five times faster that way;
/// - how often the device uses it at all, spread over the week;
/// - the account's pattern at this hour on all devices, as a share among the candidates, worth
///   `otherDevices` donations: a device that knows nothing yet ranks as the person's other
///   devices would, and its own habits take over as it learns them.
/// Old donations count less (halved every three weeks). Ties are broken by bundle id and identifier.
public struct SuggestionScorer: Sendable {
    public var model: SuggestionModel

    public init(model: SuggestionModel = SuggestionModel()) {
        self.model = model
    }

    /// The best `limit` of `candidates` at `moment`, best first.
    public func rank(_ candidates: [ShortcutID: ShortcutHabits], at moment: SuggestionMoment, limit: Int) -> [ScoredSuggestion] {
        guard limit > 0, !candidates.isEmpty else { return [] }
        let hour = moment.hourOfWeek
        let scale = HabitClock.scale(atMillis: moment.atMillis)
        // Sorted, so that the floating-point sums below are made in one order: equal sums give
        // equal scores, bit for bit.
        let shortcuts = candidates.keys.sorted()
        var own: [ShortcutID: SuggestionParts] = [:]
        var pattern: [ShortcutID: (all: Double, own: Double)] = [:]
        var patternTotal = 0.0
        for shortcut in shortcuts {
            let habits = candidates[shortcut]!
            var all = 0.0, mine = 0.0
            for device in habits.byDevice.keys.sorted(by: { $0.isOrdered(before: $1) }) {
                let parts = self.parts(of: habits.byDevice[device]!, hour: hour, scale: scale)
                all += parts.score
                if device == moment.deviceId {
                    own[shortcut] = parts
                    mine = parts.score
                }
            }
            pattern[shortcut] = (all, mine)
            patternTotal += all
        }
        var scored: [ScoredSuggestion] = []
        var mostlyOwn: Set<ShortcutID> = []
        scored.reserveCapacity(candidates.count)
        for shortcut in shortcuts {
            var parts = own[shortcut] ?? SuggestionParts()
            let (all, mine) = pattern[shortcut] ?? (0, 0)
            parts.otherDevices = patternTotal > 0 ? model.otherDevices * all / patternTotal : 0
            if mine * 2 >= all { mostlyOwn.insert(shortcut) }
            let score = parts.score
            guard score.isFinite, score > 0 else { continue }
            scored.append(ScoredSuggestion(shortcut: shortcut, score: score, parts: parts, reason: ""))
        }
        let best = scored.sorted { $0.score != $1.score ? $0.score > $1.score : $0.shortcut < $1.shortcut }.prefix(limit)
        return best.map { suggestion in
            var suggestion = suggestion
            suggestion.reason = SuggestionReason.text(for: suggestion.parts, hourOfWeek: hour, deviceLabel: moment.deviceLabel,
                                                      patternIsThisDevices: mostlyOwn.contains(suggestion.shortcut))
            return suggestion
        }
    }

    /// One device's part of a shortcut's score at `hour`, scaled to decayed donations. It reads
    /// only the hours it needs (about 25 of the 168), each converted from its exact sum once.
    func parts(of sums: HabitSums, hour: Int, scale: (exponent: Int, divisor: Double)) -> SuggestionParts {
        guard !sums.isEmpty else { return SuggestionParts() }
        func value(_ hour: Int) -> Double {
            guard let sum = sums.hours[hour] else { return 0 }
            return sum.doubleValue(timesTwoToThe: scale.exponent) / scale.divisor
        }
        func near(_ hour: Int) -> Double {
            let (one, two) = model.neighbourHours
            return value(hour)
                + one * (value((hour + 1) % 168) + value((hour + 167) % 168))
                + two * (value((hour + 2) % 168) + value((hour + 166) % 168))
        }
        let day = hour / 24, hourOfDay = hour % 24
        let weekend = day >= 5
        let others = (weekend ? 5..<7 : 0..<5).filter { $0 != day }
        var sameHour = 0.0
        for other in others { sameHour += near(other * 24 + hourOfDay) }
        sameHour /= Double(max(others.count, 1))
        let total = sums.total.doubleValue(timesTwoToThe: scale.exponent) / scale.divisor
        return SuggestionParts(
            thisHour: near(hour),
            sameHourOtherDays: model.sameHourOtherDays * sameHour,
            otherDevices: 0,
            overall: model.overall * total / Double(HabitClock.hoursPerWeek))
    }
}

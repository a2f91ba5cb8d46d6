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
/// Old donations count less (halved every three weeks). Where the device is (its place tokens,
/// when it names any) multiplies that: by the share of the shortcut's placed donations, on all
/// devices, in this part of the week, made in its cell (and, at `placeNeighbours`, the cells
/// around it), smoothed by `placePartPseudoCount` donations towards that share over the whole
/// week, itself smoothed towards `placePrior` by `placePseudoCount` donations. When none of the candidates was ever used
/// there (somewhere new), the place is left out and the ranking is time alone. Ties are broken
/// by bundle id and identifier (in the byte order of their UTF-8).
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
        // equal scores, bit for bit. Arrays by position from here on (no hashing per shortcut).
        // Byte order of the UTF-8 (bundle id, then identifier): a total order like `<`, and
        // cheaper to compare than String's.
        let entries = candidates.sorted { lhs, rhs in
            lhs.key.bundleId != rhs.key.bundleId
                ? lhs.key.bundleId.utf8.lexicographicallyPrecedes(rhs.key.bundleId.utf8)
                : lhs.key.identifier.utf8.lexicographicallyPrecedes(rhs.key.identifier.utf8)
        }
        var own = [SuggestionParts](repeating: SuggestionParts(), count: entries.count)
        var patterns = [(all: Double, own: Double)](repeating: (0, 0), count: entries.count)
        var patternTotal = 0.0
        let (here, near) = moment.placeSlots
        let nearby = Set(near)
        let part = PlaceToken.partOfWeek(hourOfWeek: hour)
        var placed = [PlacedUse](repeating: PlacedUse(), count: here == nil ? 0 : entries.count)
        var usedHere = false
        for (index, entry) in entries.enumerated() {
            var all = 0.0, mine = 0.0
            let devices = entry.value.byDevice
            let order = devices.count == 1 ? Array(devices.keys) : devices.keys.sorted { $0.isOrdered(before: $1) }
            for device in order {
                let sums = devices[device]!
                let parts = self.parts(of: sums, hour: hour, scale: scale)
                all += parts.score
                if device == moment.deviceId {
                    own[index] = parts
                    mine = parts.score
                }
                if let here, !sums.places.isEmpty {
                    placed[index].add(self.placed(sums, here: here, near: nearby, part: part, scale: scale))
                }
            }
            patterns[index] = (all, mine)
            patternTotal += all
            if here != nil, placed[index].here > 0 { usedHere = true }
        }
        var scored: [(index: Int, parts: SuggestionParts, score: Double)] = []
        scored.reserveCapacity(entries.count)
        for index in entries.indices {
            var parts = own[index]
            parts.otherDevices = patternTotal > 0 ? model.otherDevices * patterns[index].all / patternTotal : 0
            if usedHere {
                let use = placed[index]
                let week = (use.here + model.placePseudoCount * model.placePrior) / (use.all + model.placePseudoCount)
                parts.place = (use.hereInPart + model.placePartPseudoCount * week) / (use.allInPart + model.placePartPseudoCount)
            }
            let score = parts.score
            guard score.isFinite, score > 0 else { continue }
            scored.append((index, parts, score))
        }
        // Entries are in shortcut order, so an index breaks ties as the shortcut would.
        let best = scored.sorted { $0.score != $1.score ? $0.score > $1.score : $0.index < $1.index }.prefix(limit)
        return best.map { chosen in
            let (all, mine) = patterns[chosen.index]
            let mostlyHere = usedHere && placed[chosen.index].here * 2 >= placed[chosen.index].all
            let reason = SuggestionReason.text(for: chosen.parts, hourOfWeek: hour, deviceLabel: moment.deviceLabel,
                                               patternIsThisDevices: mine * 2 >= all, mostlyHere: mostlyHere)
            return ScoredSuggestion(shortcut: entries[chosen.index].key, score: chosen.score, parts: chosen.parts, reason: reason)
        }
    }

    /// A shortcut's placed use, in decayed donations: in the cell asked about (and, at
    /// `placeNeighbours`, the cells around it) and in all, over the whole week and in the part of
    /// the week asked about.
    struct PlacedUse {
        var here = 0.0, all = 0.0, hereInPart = 0.0, allInPart = 0.0

        mutating func add(_ other: PlacedUse) {
            here += other.here
            all += other.all
            hereInPart += other.hereInPart
            allInPart += other.allInPart
        }
    }

    /// One device's placed use of a shortcut (`PlacedUse`), the cell `here`, the cells `near`,
    /// the part of the week `part`. Keys in ascending order, as everywhere here, so the sums are
    /// made in one order.
    func placed(_ sums: HabitSums, here: UInt8, near: Set<UInt8>, part: Int, scale: (exponent: Int, divisor: Double)) -> PlacedUse {
        var use = PlacedUse()
        let keys = sums.places.count == 1 ? Array(sums.places) : sums.places.sorted { $0.key < $1.key }
        for (key, sum) in keys {
            let value = sum.doubleValue(timesTwoToThe: scale.exponent) / scale.divisor
            let slot = PlaceToken.slot(ofKey: key), inPart = PlaceToken.part(ofKey: key) == part
            let weight = slot == here ? 1 : near.contains(slot) ? model.placeNeighbours : 0
            use.all += value
            use.here += weight * value
            if inPart {
                use.allInPart += value
                use.hereInPart += weight * value
            }
        }
        return use
    }

    /// One device's part of a shortcut's score at `hour`, scaled to decayed donations. It walks
    /// the hours the device used the shortcut in (few, mostly), not the 25 hours the parts look
    /// at: each hour counts for the hour asked about when it is within two of it, and for the
    /// same hour of another day of the same kind when it is within two of that.
    func parts(of sums: HabitSums, hour: Int, scale: (exponent: Int, divisor: Double)) -> SuggestionParts {
        guard !sums.isEmpty else { return SuggestionParts() }
        let (one, two) = model.neighbourHours
        let weights = [1, one, two]
        let day = hour / 24, hourOfDay = hour % 24
        let weekend = day >= 5
        var thisHour = 0.0, sameHour = 0.0
        // In the hours' order, as the shortcuts' and the devices' above: a dictionary's order
        // follows its capacity and history, and the floating-point sums below their order.
        let hours = sums.hours.count == 1 ? Array(sums.hours) : sums.hours.sorted { $0.key < $1.key }
        for (other, sum) in hours {
            // Distance to the hour asked about, around the week.
            let apart = min((other - hour + 168) % 168, (hour - other + 168) % 168)
            // The slot `other` is near on its own day: other day's hourOfDay, within two hours.
            let shifted = (other - hourOfDay + 2 + 168) % 168
            let slotDay = shifted / 24, slotApart = abs(shifted % 24 - 2)
            let nearSlot = shifted % 24 <= 4 && slotDay != day && (slotDay >= 5) == weekend
            guard apart <= 2 || nearSlot else { continue }
            let value = sum.doubleValue(timesTwoToThe: scale.exponent)
            if apart <= 2 { thisHour += weights[apart] * value }
            if nearSlot { sameHour += weights[slotApart] * value }
        }
        sameHour /= weekend ? 1 : 4
        let factor = 1 / scale.divisor
        let total = sums.total.doubleValue(timesTwoToThe: scale.exponent)
        return SuggestionParts(
            thisHour: thisHour * factor,
            sameHourOtherDays: model.sameHourOtherDays * sameHour * factor,
            otherDevices: 0,
            overall: model.overall * total / Double(HabitClock.hoursPerWeek) * factor)
    }
}

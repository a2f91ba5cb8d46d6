import Foundation
import ShortcutSyncDomain

/// Hit@1, Hit@4 and MRR@5 of each way of ranking, over every scored donation, over those of
/// devices in their first week, and over those of each person's main (first) device.
public struct SuggestionScoreboard: Sendable, Codable {
    public enum Method: String, Sendable, Codable, CaseIterable {
        case service, mostFrequent = "most-frequent", mostRecent = "most-recent", oracle
        /// The oracle that knows the true rates by time, not where the person is (populations
        /// with places only: elsewhere it is the oracle).
        case oracleByTime = "oracle by time"
    }

    public struct Tally: Sendable, Codable {
        public var scored = 0
        public var hitsAt1 = 0
        public var hitsAt4 = 0
        public var reciprocalRanks = 0.0

        public var hitAt1: Double { scored == 0 ? 0 : Double(hitsAt1) / Double(scored) }
        public var hitAt4: Double { scored == 0 ? 0 : Double(hitsAt4) / Double(scored) }
        public var mrrAt5: Double { scored == 0 ? 0 : reciprocalRanks / Double(scored) }

        mutating func record(rank: Int?) {
            scored += 1
            guard let rank else { return }
            if rank == 1 { hitsAt1 += 1 }
            if rank <= 4 { hitsAt4 += 1 }
            if rank <= 5 { reciprocalRanks += 1 / Double(rank) }
        }
    }

    public var all: [Method: Tally] = [:]
    public var firstWeek: [Method: Tally] = [:]
    public var mainDevice: [Method: Tally] = [:]

    public init() {}

    /// Adds another board's tallies (of other people) to this one's.
    public mutating func merge(_ other: SuggestionScoreboard) {
        func add(_ into: inout [Method: Tally], _ from: [Method: Tally]) {
            for (method, tally) in from {
                into[method, default: Tally()].scored += tally.scored
                into[method, default: Tally()].hitsAt1 += tally.hitsAt1
                into[method, default: Tally()].hitsAt4 += tally.hitsAt4
                into[method, default: Tally()].reciprocalRanks += tally.reciprocalRanks
            }
        }
        add(&all, other.all)
        add(&firstWeek, other.firstWeek)
        add(&mainDevice, other.mainDevice)
    }

    /// Records where `method` ranked the shortcut that was then donated (nil: not in its top 5).
    mutating func record(_ method: Method, rank: Int?, firstWeek isFirstWeek: Bool, mainDevice isMain: Bool) {
        all[method, default: Tally()].record(rank: rank)
        if isFirstWeek { firstWeek[method, default: Tally()].record(rank: rank) }
        if isMain { mainDevice[method, default: Tally()].record(rank: rank) }
    }

    /// The targets of DESIGN §8 for the service against the baselines and the oracle.
    public var verdicts: [(String, Bool)] {
        func tally(_ method: Method) -> Tally { all[method] ?? Tally() }
        let service = tally(.service), oracle = tally(.oracle)
        let baseline1 = max(tally(.mostFrequent).hitAt1, tally(.mostRecent).hitAt1)
        let baseline4 = max(tally(.mostFrequent).hitAt4, tally(.mostRecent).hitAt4)
        let newDevices = firstWeek[.service]?.hitAt4 ?? 0, main = mainDevice[.service]?.hitAt4 ?? 0
        return [
            ("Hit@1 ≥ better baseline + 15 points", service.hitAt1 >= baseline1 + 0.15),
            ("Hit@4 ≥ better baseline + 15 points", service.hitAt4 >= baseline4 + 0.15),
            ("Hit@1 within 8 points of the oracle", service.hitAt1 >= oracle.hitAt1 - 0.08),
            ("Hit@4 within 8 points of the oracle", service.hitAt4 >= oracle.hitAt4 - 0.08),
            ("first-week devices' Hit@4 ≥ 90 % of main devices'", newDevices >= 0.9 * main),
        ]
    }

    /// The quality table.
    public var table: String {
        func percent(_ value: Double) -> String { String(format: "%.1f %%", value * 100) }
        var lines = ["| ranking | Hit@1 | Hit@4 | MRR@5 | first-week devices Hit@4 | main devices Hit@4 | donations scored |",
                     "| --- | --- | --- | --- | --- | --- | --- |"]
        for method in Method.allCases where all[method] != nil || method != .oracleByTime {
            let t = all[method] ?? Tally()
            let first = firstWeek[method] ?? Tally(), main = mainDevice[method] ?? Tally()
            lines.append("| \(method.rawValue) | \(percent(t.hitAt1)) | \(percent(t.hitAt4)) | \(String(format: "%.3f", t.mrrAt5)) | "
                + "\(percent(first.hitAt4)) (\(first.scored)) | \(percent(main.hitAt4)) (\(main.scored)) | \(t.scored) |")
        }
        lines.append("")
        for (target, met) in verdicts { lines.append("- \(target): \(met ? "met" : "**not met**")") }
        return lines.joined(separator: "\n")
    }
}

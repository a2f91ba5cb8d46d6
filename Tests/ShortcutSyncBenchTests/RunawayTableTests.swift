import Histogram
@testable import ShortcutSyncBench
import Testing

/// `bench runaway`'s pooling and verdicts: each side's rounds pooled, and with a flush probe the
/// rounds in which the database's disk stalled left out of the second ratio.
@Suite struct RunawayTableTests {
    /// A side of a round: `pushes` calm pushes, all taking `milliseconds`, and what the probe saw
    /// (nil: no probe).
    static func side(pushes: Int = 100, milliseconds: UInt64, stalls: Int?) -> (part: RunawayBenchmark.Part, histogram: Histogram<UInt64>) {
        var histogram = PushTally.newHistogram()
        for _ in 0..<pushes { histogram.record(milliseconds * 1000) }
        var part = RunawayBenchmark.Part(calmPushes: pushes, calmFailed: 0, calmP50Milliseconds: Double(milliseconds),
                                         calmP99Milliseconds: Double(milliseconds), runawayEvents: 800, runawayRefused: 29, seconds: 4)
        if let stalls { part.record(FlushProbe.Window(longestMilliseconds: stalls > 0 ? 150 : 2, stalls: stalls, flushes: 200)) }
        return (part, histogram)
    }

    static func round(alone: UInt64, beside: UInt64, aloneStalls: Int? = 0, besideStalls: Int? = 0) -> RunawayBenchmark.Round {
        RunawayBenchmark.Round(alone: side(milliseconds: alone, stalls: aloneStalls), beside: side(milliseconds: beside, stalls: besideStalls))
    }

    static func line(_ table: String, _ prefix: String) -> String? {
        table.split(separator: "\n").map(String.init).first { $0.hasPrefix(prefix) }
    }

    @Test func aRoundTheDiskStalledInIsLeftOutOfTheSecondRatioOnly() throws {
        // Two calm rounds at 5 ms each side, and one whose runaway side the disk stalled (150 ms).
        let result = RunawayBenchmark.result(calmAccounts: 100, runawayDevices: 8, rounds: [
            Self.round(alone: 5, beside: 5), Self.round(alone: 5, beside: 150, besideStalls: 3), Self.round(alone: 5, beside: 5),
        ])
        #expect(result.roundRatios.count == 3)
        #expect(result.p99Ratio > 20, "pooled over every round, the stalled round decides the p99")
        #expect(result.stallFreeRounds == 2)
        let stallFree = try #require(result.stallFreeRatio)
        #expect(abs(stallFree - 1) < 0.01)
        #expect(result.with.flushStalls == 3 && result.without.flushStalls == 0)
        #expect(result.with.longestFlushMilliseconds == 150)
        let table = result.table
        #expect(try #require(Self.line(table, "| calm push p99 with / without the runaway")).hasSuffix("| ≤ 1.20 | **not met** |"))
        let second = try #require(Self.line(table, "| calm push p99 with / without, pooled over the 2 round pairs with no flush over 20 ms"))
        #expect(second.hasSuffix("| 1.00 | ≤ 1.20 | met |"))
        let disk = try #require(Self.line(table, "| the database's disk"))
        #expect(disk.contains("over 20 ms: 0 alone, 3 beside"))
    }

    @Test func aStallOnTheSideAloneLeavesThePairOutToo() throws {
        // The stall falls on the side alone: pooled, the runaway looks harmless; without the pair, 2×.
        let result = RunawayBenchmark.result(calmAccounts: 100, runawayDevices: 8, rounds: [
            Self.round(alone: 5, beside: 10), Self.round(alone: 150, beside: 10, aloneStalls: 1),
        ])
        #expect(result.p99Ratio < 1)
        #expect(result.stallFreeRounds == 1)
        #expect(abs(try #require(result.stallFreeRatio) - 2) < 0.02)
        #expect(try #require(Self.line(result.table, "| calm push p99 with / without, pooled over the 1 round pairs")).hasSuffix("| **not met** |"))
    }

    @Test func withoutAProbeThereIsNoSecondRatioAndWithEveryRoundStalledItIsSaid() throws {
        let unprobed = RunawayBenchmark.result(calmAccounts: 100, runawayDevices: 8, rounds: [
            Self.round(alone: 5, beside: 5, aloneStalls: nil, besideStalls: nil),
        ])
        #expect(unprobed.stallFreeRounds == nil && unprobed.stallFreeRatio == nil)
        #expect(unprobed.without.flushStalls == nil && unprobed.without.longestFlushMilliseconds == nil)
        #expect(Self.line(unprobed.table, "| the database's disk") == nil)
        #expect(try #require(Self.line(unprobed.table, "| calm push p99 with / without the runaway")).hasSuffix("| met |"))

        let stalled = RunawayBenchmark.result(calmAccounts: 100, runawayDevices: 8, rounds: [
            Self.round(alone: 5, beside: 150, besideStalls: 1),
        ])
        #expect(stalled.stallFreeRounds == 0 && stalled.stallFreeRatio == nil)
        let second = try #require(Self.line(stalled.table, "| calm push p99 with / without, pooled over the 0 round pairs"))
        #expect(second.contains("— (every round had a stall)"))
    }
}

@testable import ShortcutSyncBench
import Testing

/// `bench sustained`'s verdicts: below capacity the push → pull target, past it (a share above 1,
/// DESIGN §8's 150 %) every answer within 2 s and each a 200 or a 503.
@Suite struct SustainedTableTests {
    static func result(share: Double, longest: Double, failures: [String: Int], p99: Double = 40) -> SustainedBenchmark.Result {
        let pushes = SustainedBenchmark.Pushes(events: 1_000, pushes: 100, seconds: 1, pushP50Milliseconds: 5, pushP99Milliseconds: 30,
                                               pushMaxMilliseconds: longest, failures: failures)
        return SustainedBenchmark.Result(
            accounts: 10, sampleAccounts: 2, batch: 10, sustained: pushes, loaded: pushes, offeredEventsPerSecond: 1_000, share: share,
            latency: .init(samples: 10, p50Milliseconds: 10, p99Milliseconds: p99, maxMilliseconds: p99, missed: 0, failedPushes: 0),
            views: .init(accounts: 10, views: 20, lacking: 0, surplus: 0))
    }

    static func line(_ table: String, _ prefix: String) -> String? {
        table.split(separator: "\n").map(String.init).first { $0.hasPrefix(prefix) }
    }

    @Test func pastCapacityEveryAnswerMustComeWithinTwoSecondsAndBeA200OrA503() throws {
        let bound = "| every answer at 150 % within 2 s"
        let shed = try #require(Self.line(Self.result(share: 1.5, longest: 1_900, failures: ["503": 40]).table, bound))
        #expect(shed.hasSuffix("| met |"))
        #expect(shed.contains("the longest 1900.0 ms; 100 × 200, 40 × 503"))
        // What was offered counts the refused pushes, each sent again; what was acknowledged does not.
        let offered = try #require(Self.line(Self.result(share: 1.5, longest: 1_900, failures: ["503": 40]).table, "| 150 % of it"))
        #expect(offered.contains("offered 1,400 events/s (140 % of the 1,000 asked), acknowledged 1,000 events/s"))
        let late = try #require(Self.line(Self.result(share: 1.5, longest: 2_100, failures: ["503": 40]).table, bound))
        #expect(late.hasSuffix("| **not met** |"))
        let refused = try #require(Self.line(Self.result(share: 1.5, longest: 900, failures: ["503": 40, "500": 1]).table, bound))
        #expect(refused.hasSuffix("| **not met** |"), "a 500 is not shedding")
        let untold = try #require(Self.line(Self.result(share: 1.5, longest: 900, failures: ["503": 40, "503 without Retry-After": 1]).table, bound))
        #expect(untold.hasSuffix("| **not met** |"), "a 503 that does not say when to come back is not the shedding asked for")
        let unanswered = try #require(Self.line(Self.result(share: 1.5, longest: 900, failures: ["no answer": 1]).table, bound))
        #expect(unanswered.hasSuffix("| **not met** |"))
        // Past capacity the push → pull latency is reported, not judged.
        let latency = try #require(Self.line(Self.result(share: 1.5, longest: 900, failures: [:], p99: 500).table, "| push → another device's pull"))
        #expect(latency.hasSuffix("| — (past capacity) | |"))
    }

    @Test func theDatabasesDiskIsReportedWhenTheBenchProbedIt() throws {
        var result = Self.result(share: 0.5, longest: 900, failures: [:])
        #expect(Self.line(result.table, "| the database's disk") == nil, "no probe, no row")
        result.longestFlushMilliseconds = 148.2
        result.flushStalls = 2
        let disk = try #require(Self.line(result.table, "| the database's disk during the 50 % phase"))
        #expect(disk.contains("| longest 148.2 ms, 2 over 20 ms | — | |"))
        // The disk is reported, not judged: the latency's verdict is the same either way.
        #expect(try #require(Self.line(result.table, "| push → another device's pull")).hasSuffix("| met |"))
    }

    @Test func belowCapacityThePushToPullTargetIsJudgedAndNoAnswerBound() throws {
        let table = Self.result(share: 0.8, longest: 5_000, failures: [:], p99: 150).table
        #expect(Self.line(table, "| every answer at") == nil)
        let latency = try #require(Self.line(table, "| push → another device's pull"))
        #expect(latency.hasSuffix("| p99 ≤ 100 ms | **not met** |"))
        let met = try #require(Self.line(Self.result(share: 0.5, longest: 900, failures: [:], p99: 60).table, "| push → another device's pull"))
        #expect(met.hasSuffix("| p99 ≤ 100 ms | met |"))
    }
}

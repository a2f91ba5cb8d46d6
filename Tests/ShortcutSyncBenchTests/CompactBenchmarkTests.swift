import Foundation
import ShortcutSyncBench
import ShortcutSyncDatabaseTestSupport
import Testing

/// `bench compact --smoke`: every part measures something real (the heavy account loses most of
/// its bytes and keeps its events' anchors, the maintenance tasks compact every account while
/// the others push, both rebuilds run and the second verifies), and the table has its rows.
@Suite struct CompactBenchmarkTests {
    @Test func aSmokeRunMeasuresEveryPart() async throws {
        let load = CompactBenchmark.Load.smoke
        // The scratch databases are made on the test cluster beside this test's own.
        let result = try await TestDatabase.withClient { _, url in
            try await CompactBenchmark(load: load, server: url, logger: TestDatabase.shared.logger).run()
        }
        #expect(result.before.events == Int64(load.donations))
        #expect(result.after.events < 60 && result.after.events == result.before.events - Int64(result.eventsRemoved), "\(result.after)")
        #expect(result.after.rows * 5 < result.before.rows && result.after.eventRows < result.before.eventRows, "\(result.before) \(result.after)")
        #expect(result.after.relations < result.before.relations)
        #expect(result.removedPerSecond > 0 && result.rebuildUncompactedSeconds > 0 && result.rebuildCompactedSeconds > 0)
        // The head is held for the compaction's second step only: the check and the writes.
        #expect(result.headHeldSeconds > 0 && result.headHeldSeconds < result.compactionSeconds, "\(result.headHeldSeconds) s of \(result.compactionSeconds) s")
        #expect(result.backgroundEventsRemoved > 0)
        #expect(result.pushesWithout.count > 0 && result.pushesDuring.count > 0 && result.p99Ratio > 0)
        let rows = result.table.split(separator: "\n")
        #expect((result.peakResidentDuringCompaction ?? 0) >= (result.residentBeforeCompaction ?? 0) && (result.residentBeforeCompaction ?? 0) > 0)
        #expect(rows.count == 9 && rows.allSatisfy { $0.filter { $0 == "|" }.count == 7 }, "\(result.table)")
        let decoded = try JSONDecoder().decode(CompactBenchmark.Result.self, from: JSONEncoder().encode(result))
        #expect(decoded == result)
    }

    /// `--heavy-only`: the heavy account's part alone, its table without the others' rows.
    @Test func theHeavyAccountAlone() async throws {
        var load = CompactBenchmark.Load.smoke
        load.heavyOnly = true
        let result = try await TestDatabase.withClient { _, url in
            try await CompactBenchmark(load: load, server: url, logger: TestDatabase.shared.logger).run()
        }
        #expect(result.eventsRemoved > 0 && result.pushesWithout.count == 0 && result.rebuildUncompactedSeconds == 0)
        #expect(result.table.split(separator: "\n").count == 7, "\(result.table)")
    }
}

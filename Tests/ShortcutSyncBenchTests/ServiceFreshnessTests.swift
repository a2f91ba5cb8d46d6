@testable import ShortcutSyncBench
import Testing

/// The service's own freshness figures as `bench sustained` reads them from two scrapes of
/// `/metrics`: the histogram's change between them, its quantiles as Prometheus estimates them.
@Suite struct ServiceFreshnessTests {
    static func metrics(_ counts: [(String, Int)]) -> String {
        (["# TYPE shortcut_sync_freshness_stream_seconds histogram"]
            + counts.map { "shortcut_sync_freshness_stream_seconds_bucket{le=\"\($0.0)\"} \($0.1)" }
            + ["shortcut_sync_freshness_stream_seconds_count \(counts.last?.1 ?? 0)"]).joined(separator: "\n")
    }

    @Test func theQuantilesAreOfWhatHappenedBetweenTheTwoReadings() throws {
        let before = ServiceFreshness.Reading(metrics: Self.metrics([("0.005", 10), ("0.01", 10), ("0.025", 10), ("+Inf", 10)]))
        // Between the readings: 100 pokes, 50 within 5 ms, 49 within 5–10 ms, 1 within 10–25 ms.
        let after = ServiceFreshness.Reading(metrics: Self.metrics([("0.005", 60), ("0.01", 109), ("0.025", 110), ("+Inf", 110)]))
        let figures = try #require(ServiceFreshness(from: before, to: after))
        #expect(figures.samples == 100)
        #expect(abs(figures.p50Milliseconds - 5) < 0.001, "the 50th of 100 ends the first bucket")
        #expect(abs(figures.p99Milliseconds - 10) < 0.001, "the 99th ends the second")
        #expect(ServiceFreshness(from: after, to: after) == nil, "nothing happened, no figures")
    }
}

@testable import ShortcutSyncBench
import Testing

/// The service's own figures as `bench sustained` reads them from two scrapes of `/metrics`: a
/// histogram's change between them, its quantiles as Prometheus estimates them.
@Suite struct ServiceHistogramTests {
    static func metrics(_ counts: [(String, Int)]) -> String {
        (["# TYPE shortcut_sync_freshness_stream_seconds histogram"]
            + counts.map { "shortcut_sync_freshness_stream_seconds_bucket{le=\"\($0.0)\"} \($0.1)" }
            + ["shortcut_sync_freshness_stream_seconds_count \(counts.last?.1 ?? 0)"]).joined(separator: "\n")
    }

    @Test func theQuantilesAreOfWhatHappenedBetweenTheTwoReadings() throws {
        let before = ServiceHistogram.Reading(metrics: Self.metrics([("0.005", 10), ("0.01", 10), ("0.025", 10), ("+Inf", 10)]), series: ServiceHistogram.freshness)
        // Between the readings: 100 pokes, 50 within 5 ms, 49 within 5–10 ms, 1 within 10–25 ms.
        let after = ServiceHistogram.Reading(metrics: Self.metrics([("0.005", 60), ("0.01", 109), ("0.025", 110), ("+Inf", 110)]), series: ServiceHistogram.freshness)
        let figures = try #require(ServiceHistogram(from: before, to: after))
        #expect(figures.samples == 100)
        #expect(abs(figures.p50Milliseconds - 5) < 0.001, "the 50th of 100 ends the first bucket")
        #expect(abs(figures.p99Milliseconds - 10) < 0.001, "the 99th ends the second")
        #expect(ServiceHistogram(from: after, to: after) == nil, "nothing happened, no figures")
    }

    @Test func aPushHistogramCountsOnlyThePushRoutesAnswers200() throws {
        func line(_ route: String, _ status: Int, _ le: String, _ count: Int) -> String {
            "http_server_request_duration_bucket{http_route=\"\(route)\",http_request_method=\"POST\",http_response_status_code=\"\(status)\",le=\"\(le)\"} \(count)"
        }
        let before = ["# TYPE http_server_request_duration histogram",
                      line("/v1/sync/push", 200, "0.005", 0), line("/v1/sync/push", 200, "0.05", 0), line("/v1/sync/push", 200, "+Inf", 0),
                      line("/v1/sync/push", 503, "0.005", 0), line("/v1/sync/push", 503, "+Inf", 0),
                      line("/v1/sync/pull", 200, "0.005", 0), line("/v1/sync/pull", 200, "+Inf", 0)].joined(separator: "\n")
        // 100 pushes answered 200: 98 within 5 ms, 2 within 5–50 ms; besides, 500 refused with 503
        // at once and 1,000 pulls, none of which may count.
        let after = ["# TYPE http_server_request_duration histogram",
                     line("/v1/sync/push", 200, "0.005", 98), line("/v1/sync/push", 200, "0.05", 100), line("/v1/sync/push", 200, "+Inf", 100),
                     line("/v1/sync/push", 503, "0.005", 500), line("/v1/sync/push", 503, "+Inf", 500),
                     line("/v1/sync/pull", 200, "0.005", 1_000), line("/v1/sync/pull", 200, "+Inf", 1_000)].joined(separator: "\n")
        let pushes = try #require(ServiceHistogram(ServiceHistogram.pushesAnswered, from: before, to: after))
        #expect(pushes.samples == 100)
        #expect(abs(pushes.p99Milliseconds - 27.5) < 0.001, "the 99th of 100 is halfway into the 5–50 ms bucket")
        #expect(ServiceHistogram(ServiceHistogram.pushesAnswered, from: before, to: nil) == nil, "a scrape missing, no figures")
        #expect(ServiceHistogram(ServiceHistogram.freshness, from: before, to: after) == nil, "another histogram's lines are not read")
    }
}

import AsyncHTTPClient
import Foundation
import NIOCore

/// What the service itself measured during a phase: the change of one of its histograms on
/// `/metrics` between two scrapes, and its p50 and p99 estimated as Prometheus's
/// `histogram_quantile` would (linear within a bucket), to set beside what the load generator
/// measured from outside. Read for freshness (issue 33) and for the pushes answered (issue 30).
struct ServiceHistogram: Sendable, Hashable, Codable {
    /// Which histogram: the family of its bucket lines, and labels each of its lines must carry.
    struct Series: Sendable, Hashable {
        var family: String
        var labels: [String] = []
    }

    /// Cumulative counts by upper bound (seconds; `+Inf` as infinity), at one scrape.
    struct Reading: Sendable, Hashable {
        var buckets: [Double: Double]
    }

    var samples: Int
    var p50Milliseconds: Double
    var p99Milliseconds: Double

    /// Commit → poke delivered on a stream.
    static let freshness = Series(family: "shortcut_sync_freshness_stream_seconds_bucket")
    /// A push from its head read to its answer written, for the pushes answered 200: what the
    /// service took over them, the push gate's wait included, besides the network and the client.
    static let pushesAnswered = Series(family: "http_server_request_duration_bucket",
                                       labels: [#"http_route="/v1/sync/push""#, #"http_response_status_code="200""#])

    /// The operators' listener's `/metrics` now; nil when it cannot be read.
    static func scrape(_ operators: URL, http: HTTPClient) async -> String? {
        guard let response = try? await http.execute(HTTPClientRequest(url: operators.absoluteString + "/metrics"), timeout: .seconds(10)),
              let body = try? await response.body.collect(upTo: 1 << 24) else { return nil }
        return String(buffer: body)
    }

    /// The figures of what happened between `before` and `after`; nil without a sample.
    init?(from before: Reading, to after: Reading) {
        let bounds = after.buckets.keys.sorted()
        let counts = bounds.map { after.buckets[$0, default: 0] - before.buckets[$0, default: 0] }
        guard let total = counts.last, total > 0 else { return nil }
        func quantile(_ q: Double) -> Double {
            let rank = q * total
            var lower = 0.0, below = 0.0
            for (bound, count) in zip(bounds, counts) {
                if count >= rank {
                    // In the last (infinite) bucket, the largest finite bound is all that is known.
                    guard bound.isFinite else { return lower }
                    return lower + (bound - lower) * (count - below > 0 ? (rank - below) / (count - below) : 1)
                }
                (lower, below) = (bound, count)
            }
            return lower
        }
        samples = Int(total)
        p50Milliseconds = quantile(0.5) * 1000
        p99Milliseconds = quantile(0.99) * 1000
    }

    /// The figures of `series` between two scrapes, if both were read and it has a sample.
    init?(_ series: Series, from before: String?, to after: String?) {
        guard let before, let after else { return nil }
        self.init(from: Reading(metrics: before, series: series), to: Reading(metrics: after, series: series))
    }
}

extension ServiceHistogram.Reading {
    /// Reads the buckets of `series` from Prometheus's text format, summed over the lines that
    /// carry its labels (a histogram kept per method or status, say, counts each of them).
    init(metrics: String, series: ServiceHistogram.Series) {
        var buckets: [Double: Double] = [:]
        for line in metrics.split(separator: "\n") where line.hasPrefix(series.family) && series.labels.allSatisfy({ line.contains($0) }) {
            guard let le = line.range(of: "le=\""), let close = line[le.upperBound...].firstIndex(of: "\""),
                  let count = line.split(separator: " ").last.flatMap({ Double($0) }) else { continue }
            let bound = String(line[le.upperBound..<close])
            buckets[bound == "+Inf" ? .infinity : Double(bound) ?? .nan, default: 0] += count
        }
        self.buckets = buckets.filter { !$0.key.isNaN }
    }
}

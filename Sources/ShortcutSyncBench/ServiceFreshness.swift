import AsyncHTTPClient
import Foundation
import NIOCore

/// What the service itself measured of freshness during a phase (issue 33): the change of its
/// `shortcut_sync_freshness_stream_seconds` histogram on `/metrics` between two readings, and its
/// p50 and p99 estimated as Prometheus's `histogram_quantile` would (linear within a bucket), to
/// set beside what the load generator measured from outside.
struct ServiceFreshness: Sendable, Hashable, Codable {
    /// Cumulative counts by upper bound (seconds; `+Inf` as infinity), at one reading.
    struct Reading: Sendable, Hashable {
        var buckets: [Double: Double]
    }

    var samples: Int
    var p50Milliseconds: Double
    var p99Milliseconds: Double

    static let metric = "shortcut_sync_freshness_stream_seconds_bucket"

    /// The histogram's buckets on the operators' listener now; nil when it cannot be read.
    static func read(_ operators: URL, http: HTTPClient) async -> Reading? {
        guard let response = try? await http.execute(HTTPClientRequest(url: operators.absoluteString + "/metrics"), timeout: .seconds(10)),
              let body = try? await response.body.collect(upTo: 1 << 24) else { return nil }
        return Reading(metrics: String(buffer: body))
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
}

extension ServiceFreshness.Reading {
    /// Reads the buckets of `ServiceFreshness.metric` from Prometheus's text format.
    init(metrics: String) {
        var buckets: [Double: Double] = [:]
        for line in metrics.split(separator: "\n") where line.hasPrefix(ServiceFreshness.metric) {
            guard let le = line.range(of: "le=\""), let close = line[le.upperBound...].firstIndex(of: "\""),
                  let count = line.split(separator: " ").last.flatMap({ Double($0) }) else { continue }
            let bound = String(line[le.upperBound..<close])
            buckets[bound == "+Inf" ? .infinity : Double(bound) ?? .nan, default: 0] += count
        }
        self.buckets = buckets.filter { !$0.key.isNaN }
    }
}

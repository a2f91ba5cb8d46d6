import Synchronization

/// The latest freshness samples of one kind (issue 33), for `/readyz`'s p50 and p99 over the
/// last minutes: a ring of the newest `capacity`, each with when it was taken, so its memory is
/// fixed whatever the traffic. (`/metrics` has every sample, as a histogram.)
final class FreshnessWindow: Sendable {
    private struct Ring {
        var samples: [(at: Int64, millis: Int64)] = []
        var next = 0
    }

    let capacity: Int
    /// How far back the percentiles look, in milliseconds.
    let span: Int64
    private let ring = Mutex(Ring())

    init(capacity: Int = 4_096, span: Int64 = 5 * 60_000) {
        precondition(capacity > 0 && span > 0, "a window holds something over some time")
        self.capacity = capacity
        self.span = span
    }

    /// Records a sample of `millis` taken at `at` (epoch milliseconds).
    func record(_ millis: Int64, at: Int64) {
        ring.withLock { ring in
            if ring.samples.count < capacity {
                ring.samples.append((at, millis))
            } else {
                ring.samples[ring.next] = (at, millis)
            }
            ring.next = (ring.next + 1) % capacity
        }
    }

    /// The p50 and p99 of the samples taken within `span` before `now`, and how many there were;
    /// nil when there were none.
    func percentiles(now: Int64) -> (p50: Int64, p99: Int64, samples: Int)? {
        let recent = ring.withLock { ring in ring.samples.filter { now - $0.at <= span }.map(\.millis) }.sorted()
        guard !recent.isEmpty else { return nil }
        func rank(_ quantile: Double) -> Int64 { recent[min(recent.count - 1, Int((Double(recent.count) * quantile).rounded(.up)) - 1)] }
        return (rank(0.50), rank(0.99), recent.count)
    }
}

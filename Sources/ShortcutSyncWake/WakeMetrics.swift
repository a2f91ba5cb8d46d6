import CoreMetrics
import Metrics

/// The waker's counters (DESIGN §5 `/metrics`): wakes APNs took, wakes it refused (by kind, a
/// fixed set, never APNs' own words), and tokens dropped.
///
/// Each is looked up when it counts, not kept in a `static let`: one made before the process's
/// metrics backend was in place (a test process's first waker may be made before its first
/// service bootstraps the backend) would count into nothing for the rest of the process, and
/// the backend hands the same series to every lookup of a label. Wakes are rare (one a device in
/// twenty minutes at most): the lookup costs nothing that counts.
enum WakeMetrics {
    static var sent: Counter { Counter(label: "shortcut_sync_wakes_sent_total") }
    static var dropped: Counter { Counter(label: "shortcut_sync_push_tokens_dropped_total") }

    /// Makes the counters exist (at 0) once the metrics backend is in place: `/metrics` shows
    /// them before the first wake.
    static func register() {
        _ = sent
        _ = dropped
        // What the APNs key alert watches (deploy/prometheus/alerts.yml), there before any refusal.
        _ = Counter(label: "shortcut_sync_wakes_refused_total", dimensions: [("kind", "key_refused")])
    }

    static func refused(_ answer: APNsAnswer) {
        let kind = switch answer {
        case .delivered: "none"
        case .unregistered: "unregistered"
        case .badToken: "bad_token"
        case .keyRefused: "key_refused"
        case .retryLater: "retry_later"
        case .refused: "refused"
        }
        Counter(label: "shortcut_sync_wakes_refused_total", dimensions: [("kind", kind)]).increment()
    }
}

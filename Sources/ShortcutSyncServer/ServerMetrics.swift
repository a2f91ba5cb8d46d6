import CoreMetrics
import Metrics
import Prometheus
import Synchronization

/// The process's Prometheus registry, bootstrapped into swift-metrics once per process.
public enum ServerMetrics {
    private static let bootstrapped = Mutex<PrometheusCollectorRegistry?>(nil)

    /// The registry `/metrics` reads; the first call makes it the process's metrics backend.
    public static var registry: PrometheusCollectorRegistry {
        bootstrapped.withLock { registry in
            if let registry { return registry }
            let created = PrometheusCollectorRegistry()
            var factory = PrometheusMetricsFactory(registry: created)
            // Freshness is mostly a few milliseconds on one server, and so is a push or a pull:
            // buckets from 1 ms, so that their p50 and p99 are told apart (the default starts at 5 ms).
            // The key is the label the timer is made with (`RequestMetricsMiddleware`), before the
            // registry turns its dots into underscores.
            for label in ["shortcut_sync_freshness_stream_seconds", "shortcut_sync_freshness_pull_seconds", "http.server.request.duration"] {
                factory.durationHistogramBuckets[label] = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000].map { .milliseconds($0) }
            }
            MetricsSystem.bootstrap(factory)
            registry = created
            return created
        }
    }

    /// Bootstraps the registry, then makes every metric of this module exist (at 0), so that
    /// `/metrics` shows each from the start (what the dashboard and the alerts read), not from
    /// its first use. Called before anything that makes metrics is built: a metric made before
    /// the bootstrap would count into nothing, for good.
    public static func register() {
        _ = registry
        let all: [Any] = [pushes, rejectedPushes, pushesOverBudget, pushesHeld, readsOverBudget, deviceChangesOverBudget, pushesShed, pushesOverKeptRows, eventsAppended, openStreams, waitingPulls,
                          pushesUnderWay, pulls, suggestions, suggestionsOverKeptSums, databaseReachable, accountsBehind, eventsBehind, parkedAccounts,
                          compactionFailures]
        _ = all
    }

    static let pushes = Counter(label: "shortcut_sync_pushes_total")
    static let rejectedPushes = Counter(label: "shortcut_sync_pushes_rejected_total")
    static let pushesOverBudget = Counter(label: "shortcut_sync_pushes_over_budget_total")
    /// Pushes that came while their account's told wait (`Retry-After`) still ran, held until it ended.
    static let pushesHeld = Counter(label: "shortcut_sync_pushes_held_total")
    /// Pulls and suggestion requests answered 429: their device was over its budget of reads.
    static let readsOverBudget = Counter(label: "shortcut_sync_reads_over_budget_total")
    /// Sign-ins and sign-outs answered 429: their account was over its budget of them (issue 56).
    static let deviceChangesOverBudget = Counter(label: "shortcut_sync_device_changes_over_budget_total")
    /// Pushes answered 503 because none of the server's places for pushes came free in time (`PushGate`).
    static let pushesShed = Counter(label: "shortcut_sync_pushes_shed_total")
    static let eventsAppended = Counter(label: "shortcut_sync_events_appended_total")
    /// Pushes folded over the rows this server kept from their account's last pushes: one
    /// statement, no read (`FoldReadCache`, `serve --push-rows-kept`).
    static let pushesOverKeptRows = Counter(label: "shortcut_sync_pushes_over_kept_rows_total")
    static let openStreams = Gauge(label: "shortcut_sync_open_streams")
    static let waitingPulls = Gauge(label: "shortcut_sync_waiting_pulls")
    /// Pushes admitted and not yet answered: reading their bodies, waiting for a place, or running.
    static let pushesUnderWay = Gauge(label: "shortcut_sync_pushes_under_way")
    static let pulls = Counter(label: "shortcut_sync_pulls_total")
    static let suggestions = Counter(label: "shortcut_sync_suggestions_total")
    /// Suggestions requests ranked over the sums kept from their device's last request: the
    /// head's mark read, no sums (`SuggestionCandidateCache`, `serve --suggestion-sums-kept`).
    static let suggestionsOverKeptSums = Counter(label: "shortcut_sync_suggestions_over_kept_sums_total")
    /// Read at each scrape (`SyncAPI.metrics`): 1 while the database answers, else 0.
    static let databaseReachable = Gauge(label: "shortcut_sync_database_reachable")
    /// Read at each scrape, at most once a second from the database: accounts whose views are
    /// behind their version, the events they lack, and the accounts parked (their fold failed).
    static let accountsBehind = Gauge(label: "shortcut_sync_accounts_behind")
    static let eventsBehind = Gauge(label: "shortcut_sync_events_behind")
    static let parkedAccounts = Gauge(label: "shortcut_sync_parked_accounts")
    /// Counted by the maintenance tasks (`WorkerMetrics`, the same series by its label); made here
    /// so that its alert (deploy/prometheus/alerts.yml) has a series in every `serve`, with or
    /// without a worker.
    static let compactionFailures = Counter(label: "shortcut_sync_compaction_failures_total")
}

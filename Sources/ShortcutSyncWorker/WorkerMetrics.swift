import CoreMetrics
import Foundation

/// The maintenance tasks' swift-metrics instruments, made when they start (after the metrics
/// system is bootstrapped).
struct WorkerMetrics: Sendable {
    let events = Counter(label: "shortcut_sync_worker_events_processed_total")
    /// Transactions that folded (part of) an account behind.
    let accounts = Counter(label: "shortcut_sync_worker_account_folds_total")
    let errors = Counter(label: "shortcut_sync_worker_errors_total")
    /// Accounts whose projections are behind their head, as an idle task last saw them.
    let behind = Gauge(label: "shortcut_sync_worker_accounts_behind")
    /// Compactions of an account's history past the retention (`--keep-history`), and the events
    /// and bytes (PostgreSQL's `pg_column_size` of the rows) they removed from the log.
    let compactions = Counter(label: "shortcut_sync_compactions_total")
    let compactedEvents = Counter(label: "shortcut_sync_compacted_events_total")
    let compactedBytes = Counter(label: "shortcut_sync_compacted_bytes_total")
    /// Compactions that failed and were rolled back (their accounts retried later, `CompactionSchedule.retry(afterFailures:)`).
    let compactionFailures = Counter(label: "shortcut_sync_compaction_failures_total")
}

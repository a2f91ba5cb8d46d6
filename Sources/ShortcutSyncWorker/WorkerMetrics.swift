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
}

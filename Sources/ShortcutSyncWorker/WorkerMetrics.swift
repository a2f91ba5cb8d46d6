import Metrics
import ShortcutSyncStore

/// The worker's swift-metrics instruments, made when it starts (after the metrics system is bootstrapped).
struct WorkerMetrics: Sendable {
    let events = Counter(label: "shortcut_sync_worker_events_processed_total")
    let batches = Counter(label: "shortcut_sync_worker_batches_total")
    let notifications = Counter(label: "shortcut_sync_worker_notifications_total")
    let errors = Counter(label: "shortcut_sync_worker_errors_total")
    let batchDuration = Metrics.Timer(label: "shortcut_sync_worker_batch_duration_seconds")
    /// The log's greatest position minus the checkpoint's: about how many events wait to be folded.
    let lag = Gauge(label: "shortcut_sync_worker_lag_events")
    let checkpointPosition = Gauge(label: "shortcut_sync_worker_checkpoint_position")
    /// Accounts whose events are skipped until they can be folded again.
    let parkedAccounts = Gauge(label: "shortcut_sync_worker_parked_accounts")
    /// 1 while this worker holds the lock and folds, 0 on standby or stopped.
    let active = Gauge(label: "shortcut_sync_worker_active")

    func recordBatch(events count: Int, notifications: Int, duration: Duration) {
        let (seconds, attoseconds) = duration.components
        batchDuration.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        batches.increment()
        events.increment(by: count)
        self.notifications.increment(by: notifications)
    }

    func recordFailure() {
        errors.increment()
    }

    func recordActive(_ isActive: Bool) {
        active.record(isActive ? 1 : 0)
    }

    func record(lag: Int64, checkpoint: LogCheckpoint) {
        self.lag.record(max(0, lag))
        checkpointPosition.record(checkpoint.position)
    }
}

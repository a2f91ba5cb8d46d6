import CoreMetrics
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import ShortcutSyncDomain
import ShortcutSyncStore
import Synchronization

/// The worker's role, shared between its loop and whoever asks.
final class WorkerState: Sendable {
    private let current = Mutex(SyncWorker.Role.stopped)
    private let failed = Mutex<LogCheckpoint?>(nil)

    var role: SyncWorker.Role {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    /// Where the last batch that failed began: the next try there folds account by account.
    var failedBatch: LogCheckpoint? {
        get { failed.withLock { $0 } }
        set { failed.withLock { $0 = newValue } }
    }
}

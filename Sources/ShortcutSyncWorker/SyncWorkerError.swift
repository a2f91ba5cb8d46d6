import CoreMetrics
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import ShortcutSyncDomain
import ShortcutSyncStore
import Synchronization

/// Why the worker dropped its connection and reconnects.
enum SyncWorkerError: Error, CustomStringConvertible {
    case connectionClosed

    var description: String {
        switch self {
        case .connectionClosed: "the database closed the worker's connection"
        }
    }
}

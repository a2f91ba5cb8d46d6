import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

public struct RebuildReport: AdminReport {
    public var eventsReplayed: Int
    public var checkpointPosition: Int64
    public var seconds: Double

    public var text: String {
        "Rebuilt the projections from \(eventsReplayed) events in \(String(format: "%.1f", seconds)) s; they are live from position \(checkpointPosition) on (every device's next pull gets its whole view).\n"
    }
}

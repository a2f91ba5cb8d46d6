import ShortcutSyncStore
import ShortcutSyncTestSupport

extension PostgresEventStore {
    /// The next `count` events after `checkpoint`, waiting while other tests' transactions in the
    /// same cluster hold the log's horizon (`pg_snapshot_xmin`) below them.
    public func readLogEventually(after checkpoint: LogCheckpoint, count: Int, timeout: Duration = .seconds(30)) async throws -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        try await eventually("\(count) events are readable", timeout: timeout) {
            events = try await readLog(after: checkpoint, limit: count)
            return events.count == count
        }
        return events
    }
}

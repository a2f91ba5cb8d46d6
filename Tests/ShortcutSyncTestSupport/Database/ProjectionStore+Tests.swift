import Foundation
import PostgresNIO
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncWorker
import Testing

extension ProjectionStore {
    /// The device's whole view, as a fresh pull gives it (every page of it, applied in order).
    public func fullView(account: UUID, device: UUID) async throws -> DeviceView {
        var pull = try await pull(account: account, device: device, cursor: nil)
        #expect(pull.reset)
        var view = DeviceView.empty.applying(pull.changes)
        while pull.more {
            pull = try await self.pull(account: account, device: device, cursor: pull.cursor)
            view = pull.reset ? DeviceView.empty.applying(pull.changes) : view.applying(pull.changes)
        }
        return view
    }

    /// Waits until every committed event is folded in.
    public func waitUntilCaughtUp(timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            let status = try await status()
            if status.pendingEvents == 0 { return }
            guard ContinuousClock.now < deadline else {
                Issue.record("the worker did not catch up: \(status.pendingEvents) events pending at \(status.checkpoint.log)")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Folds everything committed, batch by batch, on `connection` (as the worker does, without
    /// one); records an issue and throws if the log has not been folded within `timeout`.
    public func foldAll(on connection: PostgresConnection, batchSize: Int = 1000, timeout: Duration = .seconds(120)) async throws -> [ProjectionNotification] {
        let log = PostgresEventStore(client: client, logger: logger)
        var notifications: [ProjectionNotification] = []
        var checkpoint = try await checkpoint().log
        let deadline = ContinuousClock.now + timeout
        while true {
            guard ContinuousClock.now < deadline else {
                Issue.record("the log was not folded within \(timeout): stopped at \(checkpoint)")
                throw CancellationError()
            }
            let events = try await log.readFoldLog(after: checkpoint, limit: batchSize)
            guard let last = events.last else {
                // Other tests' transactions in the same cluster can hold the log's horizon back a moment.
                if try await status().pendingEvents == 0 { return notifications }
                try await Task.sleep(for: .milliseconds(5))
                continue
            }
            notifications += try await ProjectionFolder(tables: .live, logger: logger).fold(events, from: checkpoint, on: connection, notify: true)
            checkpoint = last.checkpoint
        }
    }

    /// Folds whole recorded events, as the worker folds what it reads of them.
    @discardableResult
    public func apply(_ events: [RecordedEvent], from: LogCheckpoint, on connection: PostgresConnection) async throws -> [ProjectionNotification] {
        try await ProjectionFolder(tables: .live, logger: logger).fold(events.map(FoldLogEntry.init), from: from, on: connection, notify: true)
    }

    /// Rebuilds, verifies and promotes these projections.
    public var rebuilder: ProjectionRebuilder { ProjectionRebuilder(client: client, logger: logger) }
}

import Foundation
import PostgresNIO
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncWorker
import Testing

extension ProjectionStore {
    /// Each of `devices`' whole views (`fullView`), in their order.
    public func fullViews(account: UUID, devices: [UUID]) async throws -> [DeviceView] {
        var views: [DeviceView] = []
        for device in devices { views.append(try await fullView(account: account, device: device)) }
        return views
    }

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

    /// Waits until no account is behind its head (a running worker folded every import).
    public func waitUntilCaughtUp(timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            let status = try await status()
            if status.accountsBehind == 0 { return }
            guard ContinuousClock.now < deadline else {
                Issue.record("the maintenance did not catch up: \(status.accountsBehind) accounts behind by \(status.eventsBehind) events")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Folds every account behind its head (after an import, or a backlog written by a test) as
    /// the maintenance tasks do, without running them: `SyncWorker.foldNext` until it finds
    /// none. Returns how many folds it took; records an issue and throws if that takes longer
    /// than `timeout`. (Pushes fold themselves: after them there is nothing to do.)
    @discardableResult
    public func foldAll(batchSize: Int = 10_000, timeout: Duration = .seconds(120)) async throws -> Int {
        let worker = SyncWorker(queue: ProjectionStore(client: client, logger: logger), logger: logger, batchSize: batchSize)
        let deadline = ContinuousClock.now + timeout
        var folds = 0
        while try await worker.foldNext() {
            folds += 1
            guard ContinuousClock.now < deadline else {
                Issue.record("the accounts behind were not folded within \(timeout)")
                throw CancellationError()
            }
        }
        return folds
    }

    /// Rebuilds, verifies and promotes these projections.
    public var rebuilder: ProjectionRebuilder { ProjectionRebuilder(client: client, logger: logger) }
}

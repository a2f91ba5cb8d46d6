import ShortcutSyncWorker

/// Runs `worker` while `body` runs, then cancels it and waits for it to stop.
public func whileRunning<Result: Sendable>(
    _ worker: SyncWorker,
    isolation: isolated (any Actor)? = #isolation,
    _ body: () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Void.self, isolation: isolation) { group in
        group.addTask { try await worker.run() }
        defer { group.cancelAll() }
        return try await body()
    }
}

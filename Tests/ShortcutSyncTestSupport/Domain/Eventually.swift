import Testing

/// Waits until `condition` holds, looking every 10 ms; records an issue and throws after `timeout`.
public func eventually(
    _ what: @autoclosure () -> String, timeout: Duration = .seconds(20),
    isolation: isolated (any Actor)? = #isolation,
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            // Said as it is at the timeout (a child's output then, not when the wait began).
            Issue.record("timed out waiting until \(what())")
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// Runs `body`, which waits for something (a notification, a message); records an issue and
/// throws when it has not finished after `timeout` (it is cancelled then), so that a test that
/// waits for what never comes fails instead of hanging.
public func within<Result: Sendable>(
    _ timeout: Duration, _ what: String,
    _ body: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Result?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let result = first else {
            Issue.record("timed out after \(timeout) waiting for \(what)")
            throw CancellationError()
        }
        return result
    }
}

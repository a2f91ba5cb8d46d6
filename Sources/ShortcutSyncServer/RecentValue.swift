import Synchronization

/// A value worked out at most once per `interval`, however many ask: callers within the
/// interval get the last one, and callers that ask while it is being worked out wait for that
/// one work, not a work of their own. A work that fails is not kept: the next caller works again.
/// For what anyone may ask often and costs a query (`/readyz`).
final class RecentValue<Value: Sendable>: Sendable {
    private struct State {
        var last: (value: Value, at: ContinuousClock.Instant)?
        var working: Task<Value, any Error>?
    }

    private let state = Mutex(State())
    let interval: Duration

    init(interval: Duration) {
        self.interval = interval
    }

    /// The last value if it is younger than `interval`, else the one `work` makes now.
    func value(_ work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let now = ContinuousClock.now
        let (last, task) = state.withLock { state -> (Value?, Task<Value, any Error>?) in
            if let last = state.last, now - last.at < interval { return (last.value, nil) }
            if let working = state.working { return (nil, working) }
            let working = Task { try await work() }
            state.working = working
            return (nil, working)
        }
        if let last { return last }
        guard let task else { preconditionFailure("either the last value or a work") }
        let result = await task.result
        state.withLock { state in
            guard state.working == task else { return }
            state.working = nil
            if case .success(let value) = result { state.last = (value, ContinuousClock.now) }
        }
        return try result.get()
    }
}

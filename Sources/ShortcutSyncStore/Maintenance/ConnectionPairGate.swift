import Synchronization

/// Lets one task at a time take its pair of pooled connections (`ProjectionRebuilder`'s ranges
/// each stream on one and write on another): a task that holds one connection and waits for a
/// second never meets another doing the same, so ranges on a pool smaller than twice their
/// number take turns instead of each holding one connection and waiting for ever. A task passes
/// as soon as it holds both; the gate is never held while a statement runs.
final class ConnectionPairGate: Sendable {
    private struct State {
        var taken = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Held from `enter` until `leave` (or its end, whichever comes first).
    final class Pass: Sendable {
        private let gate: ConnectionPairGate
        private let left = Atomic<Bool>(false)

        fileprivate init(gate: ConnectionPairGate) { self.gate = gate }

        /// Lets the next task in; a second call does nothing.
        func leave() {
            guard !left.exchange(true, ordering: .acquiringAndReleasing) else { return }
            gate.open()
        }

        deinit { leave() }
    }

    /// Waits until no other task is taking its pair. Not cancellable: a cancelled task that
    /// waits here passes in its turn and its `withConnection` throws at once.
    func enter() async -> Pass {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                guard state.taken else {
                    state.taken = true
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
        return Pass(gate: self)
    }

    private func open() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.taken = false
                return nil
            }
            return state.waiting.removeFirst()  // it holds the gate now
        }
        next?.resume()
    }
}

import CoreMetrics
import Foundation
import NIOCore
import Synchronization

/// Bounds the pushes this server runs against the database at once, and how long a push waits
/// to start (DESIGN §8: past capacity, shed load rather than queue without bound).
///
/// Each push holds a pooled connection from its read to its write. With every connection of the
/// pool taken by pushes, a pull or a stream's first read would queue behind them, and pushes
/// would queue in the pool for as long as the load lasts. Here at most `running` pushes run;
/// the next ones wait, first come first served, up to `wait`, and a push that could not start
/// by then is answered `503` with `Retry-After` and nothing of it stored. The rest of the pool
/// stays for the other requests.
final class PushGate: Sendable {
    let running: Int
    let wait: Duration

    private struct State {
        var running = 0
        /// The pushes waiting, in the order they came.
        var queue: [Int] = []
        var waiters: [Int: CheckedContinuation<Bool, Never>] = [:]
        /// Tickets handed out whose wait has not ended: neither admitted nor given up.
        var pending: Set<Int> = []
        var nextTicket = 0
    }

    private let state = Mutex(State())

    init(running: Int, wait: Duration) {
        self.running = running
        self.wait = wait
    }

    /// Runs `push` once a place is free; throws `APIProblem` 503 without running it when none
    /// was free within `wait` (or the request ended while it waited). A push that waits is timed
    /// on `timerLoop` (its connection's event loop): with more pushes than places most pushes
    /// wait a little, and a task sleeping beside each one cost a Dispatch timer each.
    func run<Result: Sendable>(timerLoop: any EventLoop, _ push: () async throws -> Result) async throws -> Result {
        guard await enter(timerLoop: timerLoop) else {
            ServerMetrics.pushesShed.increment()
            throw APIProblem.unavailable("the service is answering as many pushes as it can; nothing of this push was stored: send it again")
        }
        defer { leave() }
        return try await push()
    }

    private func enter(timerLoop: any EventLoop) async -> Bool {
        let ticket = state.withLock { state -> Int? in
            if state.running < running, state.queue.isEmpty {
                state.running += 1
                return nil
            }
            defer { state.nextTicket += 1 }
            state.pending.insert(state.nextTicket)
            return state.nextTicket
        }
        guard let ticket else { return true }
        let timeout = timerLoop.scheduleTask(in: TimeAmount(wait)) { self.expire(ticket) }
        defer { timeout.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let admitted = state.withLock { state -> Bool? in
                    // Given up before it could queue.
                    guard state.pending.contains(ticket) else { return false }
                    if state.running < running, state.queue.isEmpty {
                        state.running += 1
                        state.pending.remove(ticket)
                        return true
                    }
                    state.queue.append(ticket)
                    state.waiters[ticket] = continuation
                    return nil
                }
                if let admitted { continuation.resume(returning: admitted) }
            }
        } onCancel: {
            expire(ticket)
        }
    }

    /// A waiting push gives up: it is answered without running.
    private func expire(_ ticket: Int) {
        let continuation = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            // Already admitted, or already given up: nothing to do.
            guard state.pending.remove(ticket) != nil else { return nil }
            // Not queued yet: it sees that it gave up as it comes to queue.
            guard let continuation = state.waiters.removeValue(forKey: ticket) else { return nil }
            state.queue.removeAll { $0 == ticket }
            return continuation
        }
        continuation?.resume(returning: false)
    }

    /// A push ended: the first one waiting takes its place.
    private func leave() {
        let next = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            while !state.queue.isEmpty {
                let ticket = state.queue.removeFirst()
                state.pending.remove(ticket)
                if let continuation = state.waiters.removeValue(forKey: ticket) { return continuation }
            }
            state.running -= 1
            return nil
        }
        next?.resume(returning: true)
    }
}

import Foundation
import Synchronization

/// One `NotificationSource` read by several listeners of one process (`serve`'s stream hub and
/// waker): one `LISTEN` connection for all of them, each listener with its own sequence of every
/// event. The source listens while at least one listener reads, and stops when the last one ends.
///
/// A listener that joins while the source is listening is told so first (`connected`, then
/// `listening(resumed: false)`: nothing was lost for it), as the source would tell it on a
/// connection of its own; one that joins while the database cannot be reached is told that.
public final class SharedNotifications: NotificationEvents {
    private struct State {
        var listeners: [Int: NotificationSource.Events.Continuation] = [:]
        var next = 0
        var reading: Task<Void, Never>?
        /// What a new listener is told first: where the connection stands.
        var standing: [NotificationSource.Event] = []
    }

    private let source: any NotificationEvents
    private let state = Mutex(State())

    /// `source`: one node's (`NotificationSource`) or every node's of a Citus cluster (`ClusterNotifications`).
    public init(_ source: any NotificationEvents) {
        self.source = source
    }

    public var nodesNotListening: [String] { source.nodesNotListening }

    /// How many listeners read the events now.
    public var listenerCount: Int { state.withLock { $0.listeners.count } }

    public func withEvents<Result>(_ body: (NotificationSource.Events) async throws -> Result) async throws -> Result {
        let (events, continuation) = NotificationSource.Events.makeStream()
        let ticket = state.withLock { state -> Int in
            state.next += 1
            state.listeners[state.next] = continuation
            for event in state.standing { continuation.yield(event) }
            if state.reading == nil {
                state.reading = Task { [source] in
                    try? await source.withEvents { events in
                        for await event in events { self.hand(event) }
                    }
                }
            }
            return state.next
        }
        let result: Swift.Result<Result, any Error>
        do {
            result = .success(try await withTaskCancellationHandler {
                try await body(events)
            } onCancel: {
                continuation.finish()
            })
        } catch {
            result = .failure(error)
        }
        // The last listener waits until the listening has stopped and its connection is closed.
        if let stopped = leave(ticket) { await stopped.value }
        return try result.get()
    }

    /// Hands `event` to every listener, and keeps where the connection stands for those to come.
    private func hand(_ event: NotificationSource.Event) {
        let listeners = state.withLock { state -> [NotificationSource.Events.Continuation] in
            switch event {
            case .connected: state.standing = [.connected]
            case .unreachable, .silent: state.standing = [.unreachable]
            case .listening: state.standing = [.connected, .listening(resumed: false)]
            case .projection, .deviceSignedOut, .accountErased, .accountTokenRotated, .adminTokenRotated: break
            }
            return Array(state.listeners.values)
        }
        for listener in listeners { listener.yield(event) }
    }

    /// The listener's events end; the last one to leave stops the listening, and gets its task.
    private func leave(_ ticket: Int) -> Task<Void, Never>? {
        let stopped = state.withLock { state -> Task<Void, Never>? in
            state.listeners.removeValue(forKey: ticket)?.finish()
            guard state.listeners.isEmpty else { return nil }
            defer { state.reading = nil; state.standing = [] }
            return state.reading
        }
        stopped?.cancel()
        return stopped
    }
}

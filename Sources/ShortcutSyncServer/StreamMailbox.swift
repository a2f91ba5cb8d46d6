import ServiceLifecycle
import Synchronization

/// What the hub has for one open stream or waiting pull: at most one pending poke (the highest
/// version announced) and one pending keep-alive, never a queue.
///
/// A poke is a hint to pull, so pokes merge: a client that stops reading holds one version, not
/// a growing buffer, however many pushes its account takes (DESIGN §5, "Bounded per person").
/// It is also all the state a waiting stream keeps here: no buffer, no task of its own, which is
/// what lets 10,000 of them fit in a few hundred megabytes.
///
/// Reading it (one reader: the stream's response, or a waiting pull) ends when `finish()` is
/// called, when the reading task is cancelled, and on graceful shutdown; `onTermination` runs
/// once, when it ends, its iterator goes, or it goes itself.
final class StreamMailbox: AsyncSequence, Sendable {
    typealias Element = StreamMessage

    private struct State {
        var changed: Int64?
        /// When the earliest change of the pending poke committed, when known.
        var committedAt: Int64?
        /// The trace of the earliest change of the pending poke that has one.
        var traceparent: String?
        var keepAlive = false
        var finished = false
        var reader: CheckedContinuation<StreamMessage?, Never>?
        var onTermination: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    init() {}

    /// A mailbox nobody reads any more (its response was dropped before it was written) ends too.
    deinit {
        finish()
    }

    /// Runs once when the mailbox ends or its reader goes (the hub forgets the subscriber).
    func onTermination(_ action: @escaping @Sendable () -> Void) {
        let finished = state.withLock { state -> Bool in
            guard !state.finished else { return true }
            state.onTermination = action
            return false
        }
        if finished { action() }
    }

    /// Leaves `message` for the reader, merged with what it has not read yet.
    func post(_ message: StreamMessage) {
        let handed = state.withLock { state -> (CheckedContinuation<StreamMessage?, Never>, StreamMessage)? in
            guard !state.finished else { return nil }
            switch message {
            case .changed(let version, let committedAt, let traceparent):
                state.changed = Swift.max(state.changed ?? version, version)
                if let committedAt { state.committedAt = Swift.min(state.committedAt ?? committedAt, committedAt) }
                if state.traceparent == nil { state.traceparent = traceparent }
            case .keepAlive: state.keepAlive = true
            }
            guard let reader = state.reader, let next = Self.take(&state) else { return nil }
            state.reader = nil
            return (reader, next)
        }
        if let (reader, next) = handed { reader.resume(returning: next) }
    }

    /// Ends the reading once what is pending has been read.
    func finish() {
        let (reader, onTermination) = state.withLock { state -> (CheckedContinuation<StreamMessage?, Never>?, (@Sendable () -> Void)?) in
            guard !state.finished else { return (nil, nil) }
            state.finished = true
            defer { state.reader = nil; state.onTermination = nil }
            // A reader waits only while nothing is pending.
            return (state.reader, state.onTermination)
        }
        reader?.resume(returning: nil)
        onTermination?()
    }

    /// The pending poke first (it is what a client acts on), then a keep-alive; nil when there is none.
    private static func take(_ state: inout State) -> StreamMessage? {
        if let version = state.changed {
            defer { (state.changed, state.committedAt, state.traceparent) = (nil, nil, nil) }
            return .changed(version: version, committedAt: state.committedAt, traceparent: state.traceparent)
        }
        if state.keepAlive {
            state.keepAlive = false
            return .keepAlive
        }
        return nil
    }

    /// The next message; nil once finished (also when the task is cancelled or the service shuts down gracefully).
    fileprivate func next() async -> StreamMessage? {
        await withGracefulShutdownHandler {
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let ready = state.withLock { state -> StreamMessage?? in
                        if let message = Self.take(&state) { return .some(message) }
                        if state.finished || Task.isCancelled { return .some(nil) }
                        state.reader = continuation
                        return nil
                    }
                    if let ready { continuation.resume(returning: ready) }
                }
            } onCancel: {
                self.finish()
            }
        } onGracefulShutdown: {
            self.finish()
        }
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let reader: Reader

        mutating func next() async -> StreamMessage? {
            await reader.mailbox.next()
        }
    }

    /// Ends the mailbox when its reader is dropped (a client that went away stops being read).
    fileprivate final class Reader: Sendable {
        let mailbox: StreamMailbox

        init(_ mailbox: StreamMailbox) {
            self.mailbox = mailbox
        }

        deinit {
            mailbox.finish()
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(reader: Reader(self))
    }
}

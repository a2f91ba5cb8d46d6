import Foundation
import Logging
import ServiceLifecycle
import ShortcutSyncStore
import Synchronization
import Tracing

/// Tells every server that pushes changed accounts' views (DESIGN §6, "Pokes").
///
/// The server that took a push pokes its own streams and waiting pulls of that account at once
/// (through its hub). The other servers hear of it through `NOTIFY`, coalesced: announcements are
/// gathered for `interval` and sent as few notifications as the payload limit allows, several
/// accounts each, never one per push — a `NOTIFY` serialises committing transactions, so one per
/// push would put every push of every account in one queue. Each carries this process's id, and
/// its own hub skips it.
public final class ChangeAnnouncer: Service, Sendable {
    /// This process, as the sender of its notifications.
    public let processID: UUID
    private let projections: ProjectionStore
    private let hub: NotificationHub
    private let interval: Duration
    private let logger: Logger
    /// The accounts changed since the last notification, when the earliest change committed, and
    /// each account's earliest change's trace (when the process traces).
    private let pending = Mutex<(versions: [UUID: Int64], committedAt: Int64?, traces: [UUID: String])>(([:], nil, [:]))
    private let wake: AsyncStream<Void>.Continuation
    private let wakeups: AsyncStream<Void>

    public init(projections: ProjectionStore, hub: NotificationHub, interval: Duration = .milliseconds(5), logger: Logger) {
        self.processID = hub.processID
        self.projections = projections
        self.hub = hub
        self.interval = interval
        self.logger = logger
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// The account's views changed up to `version`, committed at `committedAt` (epoch
    /// milliseconds): its streams here are poked now, the other servers' within `interval`.
    /// `traceparent`: the change's trace (`TraceParent.of()` in the push), carried to both.
    public func announce(account: UUID, version: Int64, committedAt: Int64, traceparent: String? = nil) {
        hub.deliver(account: account, version: version, committedAt: committedAt, traceparent: traceparent)
        pending.withLock { pending in
            pending.versions[account] = max(pending.versions[account] ?? 0, version)
            pending.committedAt = min(pending.committedAt ?? committedAt, committedAt)
            if let traceparent, pending.traces[account] == nil { pending.traces[account] = traceparent }
        }
        wake.yield()
    }

    /// Sends what was gathered, every `interval` while there is something, until shutdown; what is
    /// still gathered then is sent before it returns, if that takes no more than `finalFlush`.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            for await _ in self.wakeups {
                guard (try? await Task.sleep(for: self.interval)) != nil else { break }
                await self.send()
            }
        }
        // The last pokes are hints too: they may not hold up the shutdown (a database that is
        // coming back may not serve for a while).
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.send() }
            group.addTask { try? await Task.sleep(for: Self.finalFlush) }
            await group.next()
            group.cancelAll()
        }
    }

    /// The most pushes one announcement's span links to.
    static let maximumLinks = 32

    /// Runs `body` in a span of the first change's trace that links to the others' (a coalesced
    /// `NOTIFY` serves several pushes); without traces, in no span at all.
    private func withAnnouncementSpan(_ traces: [UUID: String], _ body: () async throws -> Void) async throws {
        // Each read once (a lazy sequence would read the first twice); without traces, none.
        let contexts = Array(traces.values.lazy.compactMap(TraceParent.context).prefix(Self.maximumLinks))
        guard let first = contexts.first else { return try await body() }
        try await withSpan("announce", context: first, ofKind: .producer) { span in
            span.attributes["shortcut_sync.announce.accounts"] = traces.count
            for context in contexts.dropFirst() { span.addLink(SpanLink(context: context, attributes: [:])) }
            try await body()
        }
    }

    /// How long the last pokes may take at shutdown.
    static let finalFlush: Duration = .seconds(2)

    private func send() async {
        let (versions, committedAt, traces) = pending.withLock { pending in
            defer { pending = ([:], nil, [:]) }
            return pending
        }
        guard !versions.isEmpty else { return }
        let notification = ProjectionNotification(sender: processID, versions: versions, committedAt: committedAt, traces: traces)
        let projections = projections
        do {
            // Never waits on a database that is away (`DatabaseReach`), nor on a connection that
            // died under it (`guardedQuery`); cancelled, it ends.
            try await withAnnouncementSpan(traces) {
                try await hub.reach.whileReachable { try await projections.announce(notification) }
            }
        } catch {
            // A poke is a hint: the other servers' streams learn of the change with their next
            // one, or by pulling when their LISTEN connection comes back.
            logger.log(level: .warning, "could not announce changed accounts to the other servers", error: error,
                       metadata: ["accounts": "\(versions.count)"])
        }
    }
}

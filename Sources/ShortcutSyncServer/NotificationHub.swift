import Foundation
import Logging
import ServiceLifecycle
import ShortcutSyncDomain
import ShortcutSyncStore
import Synchronization
import Tracing

/// Hands the database's notifications (`NotificationSource`) to the streams and waiting pulls
/// they concern: wakes those of the account each change names, ends those of a device that was
/// signed out or an account that was erased.
///
/// The source listens on a connection of its own (`LISTEN` cannot share a pooled one) and
/// reconnects after the database restarts; after a reconnect every subscriber is poked once,
/// since anything notified while the connection was down is lost. A poke is only a hint: pulls
/// are the truth. What it learns of the database's reach it tells `reach`: unreachable when an
/// attempt to connect fails, reachable again once a connection is made and the pool serves.
public final class NotificationHub: Service, Sendable {
    private struct Subscriber {
        /// The device whose stream or waiting pull this is: both end when it is signed out.
        var device: UUID
        /// A live stream (counted against the device's limit), or else a waiting pull.
        var isStream: Bool
        /// Weak: the stream's response or the waiting pull holds it; when it goes, so does this.
        weak var mailbox: StreamMailbox?
    }

    private let notifications: any NotificationEvents
    /// Which of the subscribers' devices are still signed in: asked each time LISTEN is in place,
    /// since sign-outs and erasures notified while it was not are lost.
    private let signedIn: @Sendable ([(account: UUID, device: UUID)]) async throws -> Set<UUID>
    /// Of the token hashes given, those the database still knows: asked for the cached tokens
    /// when a `LISTEN` comes back (`TokenCache.distrust`).
    private let tokensStillValid: @Sendable ([[UInt8]]) async throws -> Set<[UInt8]>
    private let logger: Logger
    private let keepAliveInterval: Duration
    private let subscribers = Mutex<[UUID: [Int: Subscriber]]>([:])
    private let nextID = Atomic<Int>(0)
    /// The callers of tokens looked up lately; the sessions this hub ends take their tokens with them.
    let tokens = TokenCache()
    /// Whether requests that need the database are let through (`DatabaseReach`).
    public let reach: DatabaseReach
    /// Returns once the pool has served a query: after an outage the hub lets requests in again
    /// only then, since the pool may still be in its backoff when LISTEN's connection is made.
    /// With `true`, after the database went silent: once every connection the pool holds has
    /// answered, since the ones opened before may never answer again (a black hole leaves them
    /// open), and a request lent one would wait for its statement's deadline.
    private let poolServes: @Sendable (_ everyConnection: Bool) async throws -> Void
    /// Whether the database went silent since it was last reachable (`NotificationSource.Event.silent`).
    private let wentSilent = Atomic<Bool>(false)
    /// This process, as the sender of the notifications its `ChangeAnnouncer` sends.
    public let processID = UUID()
    /// How fresh the views are where this server's devices see them (`/metrics`, `/readyz`).
    let freshness = Freshness()
    /// How long the poke to every subscriber after a `LISTEN` came back is spread over
    /// (`pokeEveryone`): a node of a cluster that flaps must not bring every device's pull of
    /// every server at once (issue 65, item 9).
    let resumePokeSpread: Duration
    /// Whether a spread poke is under way: a second resume meanwhile is covered by it.
    private let spreading = Atomic<Bool>(false)

    public init(
        notifications: any NotificationEvents, logger: Logger, keepAliveInterval: Duration = .seconds(15),
        signedIn: @escaping @Sendable ([(account: UUID, device: UUID)]) async throws -> Set<UUID>,
        tokensStillValid: @escaping @Sendable ([[UInt8]]) async throws -> Set<[UInt8]> = { _ in [] },
        poolServes: @escaping @Sendable (_ everyConnection: Bool) async throws -> Void = { _ in },
        watchesNodes: Bool = false, resumePokeSpread: Duration = .seconds(5)
    ) {
        self.resumePokeSpread = resumePokeSpread
        reach = DatabaseReach(watchesNodes: watchesNodes)
        self.poolServes = poolServes
        self.notifications = notifications
        self.signedIn = signedIn
        self.tokensStillValid = tokensStillValid
        self.logger = logger
        self.keepAliveInterval = keepAliveInterval
    }

    /// How many device streams are open.
    public var streamCount: Int { count(streams: true) }

    /// On a Citus cluster, the nodes whose `LISTEN` is not in place now (`/readyz`).
    public var nodesNotListening: [String] { notifications.nodesNotListening }

    /// How many pulls wait for a change (`waitFor`).
    public var waitingPullCount: Int { count(streams: false) }

    private func count(streams: Bool) -> Int {
        subscribers.withLock { $0.values.reduce(0) { $0 + $1.values.count { $0.isStream == streams } } }
    }

    /// Messages for one device's stream (`isStream`), or every change of the account for a pull
    /// of that device that waits. The subscription is in place when this returns, so a change
    /// right after is not missed. With `greeting`, a first keep-alive tells the client the
    /// subscription is in place. Either ends when the device is signed out or its account erased.
    func subscribe(account: UUID, device: UUID, isStream: Bool = true, greeting: Bool = false) -> StreamMailbox {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let mailbox = StreamMailbox()
        mailbox.onTermination { [weak self] in
            self?.subscribers.withLock { all in
                all[account]?[id] = nil
                if all[account]?.isEmpty == true { all[account] = nil }
            }
        }
        let displaced = subscribers.withLock { all in
            all[account, default: [:]][id] = Subscriber(device: device, isStream: isStream, mailbox: mailbox)
            return Self.beyondLimit(of: device, isStream: isStream, in: all[account] ?? [:])
        }
        for subscriber in displaced { subscriber.mailbox?.finish() }
        if greeting { mailbox.post(.keepAlive) }
        return mailbox
    }

    /// The oldest streams of `device` past `Limits.maxStreamsPerDevice` (DESIGN §5: a fifth ends
    /// the oldest), or the oldest of its waiting pulls past the same number (a fifth ends the
    /// oldest's wait, which then answers with the view it has), so one device cannot hold an
    /// unbounded number of connections open.
    private static func beyondLimit(of device: UUID, isStream: Bool, in subscribers: [Int: Subscriber]) -> [Subscriber] {
        let same = subscribers.filter { $0.value.isStream == isStream && $0.value.device == device }.sorted { $0.key < $1.key }
        return same.dropLast(Limits.maxStreamsPerDevice).map(\.value)
    }

    /// Ends every open stream and waiting pull of `device` (it was signed out).
    public func endSessions(device: UUID, account: UUID) {
        tokens.forget(device: device)
        let ended = subscribers.withLock { all in
            (all[account] ?? [:]).values.filter { $0.device == device }
        }
        for subscriber in ended { subscriber.mailbox?.finish() }
    }

    /// Ends every open stream and waiting pull of `account` (it was erased).
    public func endSessions(account: UUID) {
        tokens.forget(account: account)
        let ended = subscribers.withLock { all in (all[account] ?? [:]).values }
        for subscriber in ended { subscriber.mailbox?.finish() }
    }

    /// Pokes every stream and waiting pull of `account`: its views changed up to `version`, the
    /// earliest of those changes committed at `committedAt` when that is known (`freshness`).
    /// With the change's `traceparent` (the process traces), the poke is a span of that trace,
    /// and the streams' messages are its children.
    public func deliver(account: UUID, version: Int64, committedAt: Int64? = nil, traceparent: String? = nil, from source: PokeSource = .thisServer) {
        if let committedAt { freshness.committed(account: account, version: version, committedAt: committedAt) }
        let targets = subscribers.withLock { all in (all[account] ?? [:]).values }
        guard let parent = TraceParent.context(traceparent) else {
            for target in targets { target.mailbox?.post(.changed(version: version, committedAt: committedAt)) }
            return
        }
        let span = startSpan("poke", context: parent, ofKind: .internal)
        span.attributes["shortcut_sync.poke.source"] = source.rawValue
        span.attributes["shortcut_sync.poke.receivers"] = targets.count
        let poked = TraceParent.of(span.context)
        for target in targets { target.mailbox?.post(.changed(version: version, committedAt: committedAt, traceparent: poked)) }
        span.end()
    }

    /// Where a poke came from: a push this server took, or another server's `NOTIFY`.
    public enum PokeSource: String, Sendable {
        case thisServer = "this server"
        case notification = "notify"
    }

    /// Pokes the streams and waiting pulls of every account the notification names, unless this
    /// process sent it (its `ChangeAnnouncer` poked them already).
    func deliver(_ notification: ProjectionNotification) {
        guard notification.sender != processID else { return }
        for (account, version) in notification.versions {
            deliver(account: account, version: version, committedAt: notification.committedAt,
                    traceparent: notification.traces[account], from: .notification)
        }
    }

    private func broadcast(_ message: StreamMessage) {
        let targets = subscribers.withLock { $0.values.flatMap(\.values) }
        for target in targets { target.mailbox?.post(message) }
    }

    /// Pokes every subscriber once, a tenth of them at a time over `resumePokeSpread` (the first
    /// tenth at once), unless such a poke is under way already: whatever was notified before is
    /// covered by it, and whoever subscribed since listened in time. The subscribers are taken
    /// as they are now (weakly: one that ends meanwhile is not kept for it).
    private func pokeEveryone() {
        guard spreading.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        let targets = subscribers.withLock { $0.values.flatMap(\.values) }
        let parts = 10
        Task {
            defer { self.spreading.store(false, ordering: .releasing) }
            for part in 0..<parts {
                if part > 0 { try? await Task.sleep(for: self.resumePokeSpread / parts) }
                for index in stride(from: part, to: targets.count, by: parts) { targets[index].mailbox?.post(.changed(version: 0)) }
            }
        }
    }

    public func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.listenLoop() }
            group.addTask { await self.keepAliveLoop() }
            await group.next()
            group.cancelAll()
        }
        subscribers.withLock { all in
            for subscriber in all.values.flatMap(\.values) { subscriber.mailbox?.finish() }
            all.removeAll()
        }
    }

    /// Ends with graceful shutdown or cancellation, never with an error.
    private func keepAliveLoop() async {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: self.keepAliveInterval)
                self.broadcast(.keepAlive)
            }
        }
    }

    /// Hands the database's notifications on until graceful shutdown or cancellation.
    private func listenLoop() async {
        try? await cancelWhenGracefulShutdown {
            try await self.notifications.withEvents { events in
                for await event in events { await self.handle(event) }
            }
        }
    }

    private func handle(_ event: NotificationSource.Event) async {
        switch event {
        case .connected:
            guard !reach.isReachable else { return }
            await waitUntilThePoolServes()
            reach.becameReachable()
            logger.notice("the database can be reached again")
        case .unreachable:
            if reach.isReachable { logger.warning("the database cannot be reached; requests that need it are answered 503") }
            reach.becameUnreachable()
        case .silent:
            // The requests waiting on it end now, their statements' connections closed: the
            // pool's other connections are tried before requests are let in again.
            if reach.isReachable { logger.warning("the database stopped answering; requests that need it are answered 503") }
            wentSilent.store(true, ordering: .relaxed)
            reach.becameUnreachable()
        case .listening(let resumed):
            // Whatever was notified while the connection was down is lost: everyone pulls once
            // (spread out), the cached tokens are checked in bulk, and the sessions of devices
            // signed out (or erased) meanwhile end.
            if resumed {
                pokeEveryone()
                await checkCachedTokens()
            }
            await endSessionsSignedOutUnheard()
        case .projection(let notification):
            deliver(notification)
        case .deviceSignedOut(let signedOut):
            endSessions(device: signedOut.deviceId, account: signedOut.accountId)
        case .accountErased(let erased):
            endSessions(account: erased.accountId)
        case .accountTokenRotated(let rotated):
            // Its old token works no more: every cached token of the account is looked up again.
            tokens.forget(account: rotated.accountId)
        case .adminTokenRotated:
            break  // The process's AdminTokenReloader reads the admin token's file again.
        }
    }

    /// Asks the pool for a query until it serves one, until cancelled. Notifications wait
    /// meanwhile: none can be delivered to requests the database cannot serve. The probe waits
    /// for a pooled connection (the pool connects with its own backoff) and ends when cancelled.
    private func waitUntilThePoolServes() async {
        while !Task.isCancelled {
            if (try? await poolServes(wentSilent.load(ordering: .relaxed))) != nil {
                wentSilent.store(false, ordering: .relaxed)
                return
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Checks every cached token against the database in one statement per 1,000, and forgets
    /// those it no longer knows; if the database cannot say, every token is forgotten and looked
    /// up again by its next request, as before (issue 65, item 9: a node of a cluster that flaps
    /// no longer makes every device's next request a lookup at once).
    private func checkCachedTokens() async {
        let cached = tokens.distrust()
        guard !cached.isEmpty else { return }
        do {
            tokens.keep(only: try await tokensStillValid(cached), among: cached)
        } catch {
            logger.log(level: .warning, "could not check the cached tokens after LISTEN resumed: each is looked up again", error: error)
            tokens.forgetAll()
        }
    }

    /// Ends the streams and waiting pulls of devices no longer signed in: a sign-out or erasure
    /// notified before this server's LISTEN was in place (at start, or during an outage) is not
    /// heard, and would leave them open.
    private func endSessionsSignedOutUnheard() async {
        let open = subscribers.withLock { all in
            Set(all.flatMap { account, subscribers in subscribers.values.map { SessionKey(account: account, device: $0.device) } })
        }
        guard !open.isEmpty else { return }
        do {
            let stillIn = try await signedIn(open.map { ($0.account, $0.device) })
            for session in open where !stillIn.contains(session.device) {
                endSessions(device: session.device, account: session.account)
            }
        } catch {
            logger.log(level: .warning, "could not check the open streams' devices after LISTEN resumed", error: error)
        }
    }

    private struct SessionKey: Hashable {
        var account: UUID
        var device: UUID
    }
}

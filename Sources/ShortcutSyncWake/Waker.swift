import CoreMetrics
import Foundation
import Logging
import ServiceLifecycle
import ShortcutSyncDomain
import ShortcutSyncStore
import Synchronization
import Tracing

/// Wakes sleeping devices (DESIGN §6): a device with a push token that has not pulled its
/// account's latest version a few seconds after the change gets one background notification, at
/// most one per interval.
///
/// Every server (and `worker`) may run one; they share the work through the database, with no
/// process special. Each hears the accounts' changes (`LISTEN`, the pokes pushes send anyway)
/// and marks the devices of those accounts behind as due after `delay`; each then claims the due
/// devices with `FOR UPDATE SKIP LOCKED`, so that each wake is sent by exactly one of them. Pushes
/// never wait for any of it. Without an APNs client (no key configured) it does nothing.
public final class Waker: Service, Sendable {
    public let status: WakeStatus
    private let store: PushTokenStore
    /// How to reach APNs; its client is made when the waker runs and shut down when it stops.
    private let apns: APNsConfiguration?
    private let notifications: any NotificationEvents
    private let configuration: WakeConfiguration
    private let logger: Logger
    /// When a failed database step was last logged: while the database is away the loops fail
    /// every poll, and one warning a minute says so.
    private let lastWarning = Mutex<ContinuousClock.Instant?>(nil)
    /// The trace of each account's latest change heard (when the process traces), so that the
    /// wakes it leads to join it (every device woken for it): at most `maximumTraces`.
    private let traces = Mutex<[UUID: String]>([:])
    static let maximumTraces = 10_000

    /// `apns` nil: wakes are off (no key), and `status` says so. Check the configuration first
    /// (`APNsConfiguration.validate()`): a bad key is meant to stop the service at start.
    /// `notifications`: the database's, on the projection channel at least (the others are ignored).
    public init(store: PushTokenStore, apns: APNsConfiguration?, notifications: any NotificationEvents,
                configuration: WakeConfiguration = WakeConfiguration(), logger: Logger) {
        self.store = store
        self.apns = apns
        self.notifications = notifications
        self.configuration = configuration
        self.logger = logger
        status = WakeStatus(apns == nil ? .off : .configured)
    }

    public func run() async throws {
        // There at 0 with a key or without one: the dashboard and the alert rules read them, and
        // an absent series is no zero to Prometheus (`rate()` and alerts see nothing).
        WakeMetrics.register()
        guard let settings = apns else {
            try? await gracefulShutdown()
            return
        }
        // Made here, so that it is shut down whatever happens (a client left running traps at deinit).
        let apns = try await APNsClient(configuration: settings)
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.scheduleLoop() }
                group.addTask { await self.sweepLoop() }
                group.addTask { await self.sendLoop(apns) }
                await group.next()
                group.cancelAll()
            }
        }
        try await apns.shutdown()
    }

    /// Marks devices behind as due when their accounts change; after a lost connection (whatever
    /// was notified meanwhile is lost), every account is looked at.
    private func scheduleLoop() async {
        do {
            try await notifications.withEvents { events in
                for await event in events {
                    switch event {
                    case .projection(let notification):
                        self.remember(notification.traces)
                        await attempt("schedule wakes") {
                            try await self.store.scheduleWakes(versions: notification.versions, delay: self.configuration.delay)
                        }
                    case .listening:
                        await attempt("look for devices behind") { try await self.store.sweep(delay: self.configuration.delay) }
                    case .connected, .unreachable, .silent, .deviceSignedOut, .accountErased, .accountTokenRotated, .adminTokenRotated:
                        break
                    }
                }
            }
        } catch {
            logger.log(level: .warning, "the waker stopped listening", error: error)
        }
    }

    /// Every so often, every account: a change notified while no waker listened is found here.
    private func sweepLoop() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: configuration.sweepInterval)
            guard !Task.isCancelled else { return }
            await attempt("look for devices behind") { try await self.store.sweep(delay: self.configuration.delay) }
        }
    }

    /// Claims the wakes due and sends them, a few at once, until cancelled.
    private func sendLoop(_ apns: APNsClient) async {
        while !Task.isCancelled {
            var wakes: [DueWake] = []
            await attempt("claim the wakes due") {
                wakes = try await self.store.claimDue(limit: self.configuration.concurrentSends, interval: self.configuration.interval,
                                                      lease: self.configuration.lease)
            }
            if wakes.isEmpty {
                try? await Task.sleep(for: configuration.pollInterval)
                continue
            }
            await withTaskGroup(of: Void.self) { group in
                for wake in wakes {
                    group.addTask { await self.send(wake, with: apns) }
                }
            }
        }
    }

    /// Keeps the accounts' changes' traces for their wakes; when they are too many, the oldest
    /// ones are of wakes long sent or never due, and all are let go.
    private func remember(_ changes: [UUID: String]) {
        guard !changes.isEmpty else { return }
        traces.withLock { traces in
            if traces.count + changes.count > Self.maximumTraces { traces.removeAll() }
            traces.merge(changes) { _, newer in newer }
        }
    }

    /// Sends one wake and records what APNs said: a span of the change's trace when it is known.
    private func send(_ wake: DueWake, with apns: APNsClient) async {
        let trace = traces.withLock { $0[wake.account] }
        guard let parent = TraceParent.context(trace) else { return await send(wake, with: apns, in: nil) }
        await withSpan("wake", context: parent, ofKind: .client) { span in
            await send(wake, with: apns, in: span)
        }
    }

    private func send(_ wake: DueWake, with apns: APNsClient, in span: (any Span)?) async {
        var logger = logger
        logger[metadataKey: "account"] = "\(wake.account)"
        logger[metadataKey: "device"] = "\(wake.device)"
        let answer = await apns.send(wake, logger: logger)
        span?.attributes["shortcut_sync.wake.version"] = Int(wake.version)
        span?.attributes["apns.answer"] = answer.label
        if answer != .delivered { span?.setStatus(SpanStatus(code: .error, message: answer.label)) }
        if case .keyRefused(let reason) = answer {
            status.keyRefused(reason: reason, logger: logger)
            // An expired token is signed again (if Apple allows a new one yet) on the next try.
            if reason == "ExpiredProviderToken" { _ = await apns.providerToken.expire() }
        } else if case .retryLater(status: 0, _) = answer {
            // APNs was not reached: nothing is known of the key.
        } else {
            status.accepted()
        }
        if answer != .delivered { WakeMetrics.refused(answer) }
        await attempt("record a wake") {
            switch answer {
            case .delivered:
                WakeMetrics.sent.increment()
                try await self.store.delivered(wake)
                logger.debug("device woken")
            case .unregistered(let since):
                if try await self.store.drop(wake, unregisteredAt: since) {
                    WakeMetrics.dropped.increment()
                    logger.info("APNs says the device's token is no longer registered: dropped")
                } else {
                    // APNs' news is older than the registration: the token stays, this wake is given up.
                    try await self.store.gaveUp(wake)
                    logger.info("APNs says the device's token is no longer registered, but the device registered again since: kept")
                }
            case .badToken(let reason):
                if try await self.store.drop(wake) { WakeMetrics.dropped.increment() }
                logger.info("the device's token cannot be woken: dropped", metadata: ["reason": "\(reason)"])
            case .keyRefused, .retryLater:
                let backoff = self.configuration.backoff(afterFailures: wake.failures + 1)
                try await self.store.retryLater(wake, backoff: backoff)
                logger.debug("APNs could not take the wake now; retrying later",
                             metadata: ["answer": "\(answer.label)", "after": "\(backoff)"])
            case .refused(let status, let reason):
                try await self.store.gaveUp(wake)
                logger.warning("APNs refused the wake", metadata: ["status": "\(status)", "reason": "\(reason)"])
            }
        }
    }

    /// Runs one database step; a failure is logged (without its binds) and the loop goes on.
    private func attempt(_ what: String, _ body: () async throws -> Void) async {
        do {
            try await body()
        } catch is CancellationError {
        } catch {
            let now = ContinuousClock.now
            let due = lastWarning.withLock { last in
                guard last.map({ now - $0 >= .seconds(60) }) ?? true else { return false }
                last = now
                return true
            }
            if due { logger.log(level: .warning, "the waker could not \(what) (said at most once a minute)", error: error) }
        }
    }
}

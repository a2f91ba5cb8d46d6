import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import ShortcutSyncDomain
import ShortcutSyncStore
import Synchronization

/// What a device's live stream is told.
public enum StreamMessage: Sendable, Hashable {
    /// The views of this device's account changed (perhaps not this device's); pull.
    case changed(position: Int64)
    /// Nothing happened; a comment line keeps proxies from closing the connection.
    case keepAlive
}

/// Listens on the database for the worker's notifications and wakes the streams and waiting
/// pulls of the account each one names; ends the streams of a device that was signed out.
///
/// It holds one dedicated connection (`LISTEN` cannot share a pooled one) and reconnects after
/// the database restarts; after a reconnect every subscriber is poked once, since anything
/// notified while the connection was down is lost. A poke is only a hint: pulls are the truth.
/// Whether its last attempt to reach the database failed is what `isDatabaseReachable` says.
public final class NotificationHub: Service, Sendable {
    private struct Subscriber {
        /// The device whose stream or waiting pull this is: both end when it is signed out.
        var device: UUID
        /// A live stream (counted against the device's limit), or else a waiting pull.
        var isStream: Bool
        var continuation: AsyncStream<StreamMessage>.Continuation
    }

    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    private let keepAliveInterval: Duration
    private let subscribers = Mutex<[UUID: [Int: Subscriber]]>([:])
    private let nextID = Atomic<Int>(0)
    private let reachable = Atomic<Bool>(true)

    public init(configuration: PostgresConnection.Configuration, logger: Logger, keepAliveInterval: Duration = .seconds(15)) {
        self.configuration = configuration
        self.logger = logger
        self.keepAliveInterval = keepAliveInterval
    }

    /// False from a failed attempt to connect to the database until the next one succeeds: the
    /// database is down or unreachable, and requests that need it are answered 503 at once.
    public var isDatabaseReachable: Bool { reachable.load(ordering: .relaxed) }

    /// How many device streams are open.
    public var streamCount: Int {
        subscribers.withLock { $0.values.reduce(0) { $0 + $1.values.filter(\.isStream).count } }
    }

    /// Messages for one device's stream (`isStream`), or every change of the account for a pull
    /// of that device that waits. The subscription is in place when this returns, so a change
    /// right after is not missed. With `greeting`, a first keep-alive tells the client the
    /// subscription is in place. Either ends when the device is signed out or its account erased.
    public func subscribe(account: UUID, device: UUID, isStream: Bool = true, greeting: Bool = false) -> AsyncStream<StreamMessage> {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream<StreamMessage>.makeStream(bufferingPolicy: .bufferingNewest(8))
        continuation.onTermination = { [weak self] _ in
            self?.subscribers.withLock { all in
                all[account]?[id] = nil
                if all[account]?.isEmpty == true { all[account] = nil }
            }
        }
        let displaced = subscribers.withLock { all in
            all[account, default: [:]][id] = Subscriber(device: device, isStream: isStream, continuation: continuation)
            return isStream ? Self.beyondStreamLimit(of: device, in: all[account] ?? [:]) : []
        }
        for subscriber in displaced { subscriber.continuation.finish() }
        if greeting { continuation.yield(.keepAlive) }
        return stream
    }

    /// The oldest streams of `device` past `Limits.maxStreamsPerDevice` (DESIGN §5: a fifth ends
    /// the oldest), so one device cannot hold an unbounded number of connections open.
    private static func beyondStreamLimit(of device: UUID, in subscribers: [Int: Subscriber]) -> [Subscriber] {
        let streams = subscribers.filter { $0.value.isStream && $0.value.device == device }.sorted { $0.key < $1.key }
        return streams.dropLast(Limits.maxStreamsPerDevice).map(\.value)
    }

    /// Ends every open stream and waiting pull of `device` (it was signed out).
    public func endSessions(device: UUID, account: UUID) {
        let ended = subscribers.withLock { all in
            (all[account] ?? [:]).values.filter { $0.device == device }
        }
        for subscriber in ended { subscriber.continuation.finish() }
    }

    /// Ends every open stream and waiting pull of `account` (it was erased).
    public func endSessions(account: UUID) {
        let ended = subscribers.withLock { all in (all[account] ?? [:]).values }
        for subscriber in ended { subscriber.continuation.finish() }
    }

    /// Pokes every stream and waiting pull of the notification's account.
    func deliver(_ notification: ProjectionNotification) {
        let targets = subscribers.withLock { all in (all[notification.accountId] ?? [:]).values }
        for target in targets { target.continuation.yield(.changed(position: notification.position)) }
    }

    private func broadcast(_ message: StreamMessage) {
        let targets = subscribers.withLock { $0.values.flatMap(\.values) }
        for target in targets { target.continuation.yield(message) }
    }

    public func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.listenLoop() }
            group.addTask { await self.keepAliveLoop() }
            await group.next()
            group.cancelAll()
        }
        subscribers.withLock { all in
            for subscriber in all.values.flatMap(\.values) { subscriber.continuation.finish() }
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

    private func listenLoop() async {
        var failures = 0
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                let pokeFirst = failures > 0
                try await cancelWhenGracefulShutdown { try await self.listenOnce(pokeFirst: pokeFirst) }
            } catch {
                if Task.isCancelled || Task.isShuttingDownGracefully { break }
                logger.log(level: .warning, "the LISTEN connection failed; reconnecting", error: error)
            }
            failures += 1
            try? await Task.sleep(for: .milliseconds(min(2000, 100 * failures)))
        }
    }

    /// One LISTEN connection, for as long as it lasts. Every call on it races its close, so a
    /// connection the server ends is always noticed (see `PostgresConnection.untilClosed`).
    private func listenOnce(pokeFirst: Bool) async throws {
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        } catch {
            reachable.store(false, ordering: .relaxed)
            throw error
        }
        reachable.store(true, ordering: .relaxed)
        var failure: (any Error)?
        do {
            try await connection.untilClosed { connection in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        // Whatever was notified while the connection was down is lost: everyone pulls once.
                        try await self.listen(on: connection, to: ProjectionNotification.self, channel: ProjectionNotification.channel,
                                              whenListening: { if pokeFirst { self.broadcast(.changed(position: 0)) } },
                                              deliver: self.deliver)
                    }
                    group.addTask {
                        try await self.listen(on: connection, to: DeviceSignedOut.self, channel: DeviceSignedOut.channel) { signedOut in
                            self.endSessions(device: signedOut.deviceId, account: signedOut.accountId)
                        }
                    }
                    group.addTask {
                        try await self.listen(on: connection, to: AccountErased.self, channel: AccountErased.channel) { erased in
                            self.endSessions(account: erased.accountId)
                        }
                    }
                    try await group.next()
                    group.cancelAll()
                }
            }
        } catch {
            failure = error
        }
        try? await connection.untilClosed { try await $0.close() }
        if let failure { throw failure }
    }

    /// Hands every notification on `channel`, decoded, to `deliver`; skips (and logs) one that
    /// does not decode. Returns when the connection ends.
    private func listen<Notification: Decodable>(
        on connection: PostgresConnection, to type: Notification.Type, channel: String,
        whenListening: () -> Void = {}, deliver: (Notification) -> Void
    ) async throws {
        let decoder = JSONDecoder()
        try await connection.listen(on: channel) { notifications in
            whenListening()
            for try await notification in notifications {
                guard let decoded = try? decoder.decode(Notification.self, from: Data(notification.payload.utf8)) else {
                    self.logger.warning("ignoring an unreadable notification", metadata: ["channel": "\(channel)", "payload": "\(notification.payload)"])
                    continue
                }
                deliver(decoded)
            }
        }
    }
}

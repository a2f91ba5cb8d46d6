import Foundation
import Logging
import PostgresNIO
import Synchronization

/// What the database announces with `NOTIFY` — servers' `ProjectionNotification`s,
/// `DeviceSignedOut`, `AccountErased`, `AccountTokenRotated`, `AdminTokenRotated` — as one sequence of events that
/// outlives connections.
///
/// `LISTEN` holds a session: the source listens on one connection, and when it cannot be made,
/// fails or is ended by the server, makes another (100 ms more of a pause after each failure, 2 s
/// at most) and says so, since whatever was notified in between is lost. Every call on the
/// connection races its close (`PostgresConnection.untilClosed`), so a connection the server
/// ends is always noticed, and a heartbeat with a deadline notices one that went silent. The server's stream hub and `admin events --follow` both read it.
public struct NotificationSource: Sendable {
    /// What the sequence yields: a notification, or news of the connection.
    public enum Event: Sendable, Hashable {
        /// A connection was made: the database can be reached.
        case connected
        /// An attempt to connect failed: the database is down or cannot be reached.
        case unreachable
        /// A connection that was open stopped answering (its heartbeat's deadline passed): the
        /// network to the database has become a black hole, and every other connection opened
        /// before may be as silent. The database counts as unreachable until a connection is made.
        case silent
        /// `LISTEN` is in place on every channel. `resumed` when an earlier connection failed or
        /// ended: whatever was notified meanwhile is lost, and whoever waits should look again.
        case listening(resumed: Bool)
        case projection(ProjectionNotification)
        case deviceSignedOut(DeviceSignedOut)
        case accountErased(AccountErased)
        case accountTokenRotated(AccountTokenRotated)
        case adminTokenRotated(AdminTokenRotated)
    }

    /// A channel to listen on, and the notification each of its payloads is.
    public enum Channel: Sendable, Hashable, CaseIterable {
        case projection, deviceSignedOut, accountErased, accountTokenRotated, adminTokenRotated

        var name: String {
            switch self {
            case .projection: ProjectionNotification.channel
            case .deviceSignedOut: DeviceSignedOut.channel
            case .accountErased: AccountErased.channel
            case .accountTokenRotated: AccountTokenRotated.channel
            case .adminTokenRotated: AdminTokenRotated.channel
            }
        }

        /// The payload as this channel's notification; nil when it does not decode.
        func event(decoding payload: String, with decoder: JSONDecoder) -> Event? {
            let data = Data(payload.utf8)
            return switch self {
            case .projection: ProjectionNotification(payload: payload).map(Event.projection)
            case .deviceSignedOut: (try? decoder.decode(DeviceSignedOut.self, from: data)).map(Event.deviceSignedOut)
            case .accountErased: (try? decoder.decode(AccountErased.self, from: data)).map(Event.accountErased)
            case .accountTokenRotated: (try? decoder.decode(AccountTokenRotated.self, from: data)).map(Event.accountTokenRotated)
            case .adminTokenRotated: (try? decoder.decode(AdminTokenRotated.self, from: data)).map(Event.adminTokenRotated)
            }
        }
    }

    /// Where each connection to listen on comes from.
    public struct Connections: Sendable {
        /// Runs the body on a connection for as long as the body runs; throws without running it
        /// when no connection can be had.
        let withConnection: @Sendable (Logger, (PostgresConnection) async throws -> Void) async throws -> Void

        /// A connection of its own for each attempt, closed after it: what a service that runs
        /// for long uses, so that it never holds one of the pool's.
        public static func dedicated(_ configuration: PostgresConnection.Configuration) -> Connections {
            Connections { logger, body in
                let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
                var failure: (any Error)?
                do { try await body(connection) } catch { failure = error }
                try? await connection.untilClosed { try await $0.close() }
                if let failure { throw failure }
            }
        }

        /// One leased from `client`'s pool for as long as it lasts: for a command that holds a
        /// pool already and runs until it is interrupted.
        public static func leased(from client: PostgresClient) -> Connections {
            Connections { _, body in
                try await client.withConnection { connection in try await body(connection) }
            }
        }
    }

    /// The events, in the order they happened; it ends only when the listening ends.
    public typealias Events = AsyncStream<Event>

    public let connections: Connections
    public let channels: Set<Channel>
    public let logger: Logger
    /// Where the tasks that listen on a connection run between their statements: nil for the
    /// global executor, as in the service. A test gives one whose thread it holds up.
    let tasksExecutor: (any TaskExecutor)?

    public init(_ connections: Connections, channels: Set<Channel> = Set(Channel.allCases), logger: Logger) {
        self.init(connections, channels: channels, logger: logger, tasksExecutor: nil)
    }

    init(_ connections: Connections, channels: Set<Channel>, logger: Logger, tasksExecutor: (any TaskExecutor)?) {
        precondition(!channels.isEmpty, "a notification source listens on at least one channel")
        self.connections = connections
        self.channels = channels
        self.logger = logger
        self.tasksExecutor = tasksExecutor
    }

    /// Listens, reconnecting as often as needed, while `body` reads the events; returns what
    /// `body` returns once the listening has stopped and its connection is given back. `body`
    /// returns when it is done, or when the task is cancelled (the events then end).
    public func withEvents<Result>(_ body: (Events) async throws -> Result) async throws -> Result {
        let (events, continuation) = Events.makeStream()
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                await listen(into: continuation)
                continuation.finish()
            }
            defer { group.cancelAll() }
            return try await body(events)
        }
    }

    /// Connects and listens until cancelled, again after every failure: at once after a
    /// connection that had lasted (the database may have just gone: the next attempt tells the
    /// service so, within moments), else after a pause that grows with the failures in a row.
    private func listen(into continuation: Events.Continuation) async {
        var attempts = 0
        var failuresInARow = 0
        while !Task.isCancelled {
            let resumed = attempts > 0
            attempts += 1
            var connectedAt: ContinuousClock.Instant?
            do {
                try await connections.withConnection(logger) { connection in
                    connectedAt = .now
                    continuation.yield(.connected)
                    try await listen(on: connection, resumed: resumed, into: continuation)
                }
            } catch {
                if connectedAt == nil { continuation.yield(.unreachable) }
                if Task.isCancelled { break }
                logger.log(level: .warning, "the LISTEN connection failed; reconnecting", error: error)
            }
            if let connectedAt, ContinuousClock.now - connectedAt > .seconds(1) {
                failuresInARow = 0
                continue
            }
            failuresInARow += 1
            try? await Task.sleep(for: .milliseconds(min(2000, 100 * failuresInARow)))
        }
    }

    /// How long a new connection's `LISTEN`s may take before the connection is given up.
    static let listenDeadline: Duration = .seconds(10)

    /// A connection's `LISTEN`s were not in place within `listenDeadline`.
    struct ListenTimedOut: Error, CustomStringConvertible {
        var description: String { "the connection's LISTENs were not in place within \(NotificationSource.listenDeadline)" }
    }

    /// How often a listening connection is asked `SELECT 1`.
    static let heartbeatInterval: Duration = .milliseconds(500)
    /// How long the heartbeat's answer may take before the database counts as silent.
    static let heartbeatDeadline: Duration = .seconds(1)

    /// Asks `connection` a `SELECT 1` every `heartbeatInterval` for as long as it listens; one
    /// unanswered for `heartbeatDeadline` means nothing comes back from the database (a black
    /// hole: a failover behind an address, a dropped NAT entry, a dead switch, where no FIN or RST
    /// ever comes): says the database is unreachable, at once, so that the requests waiting on it
    /// are answered 503 and their connections closed, then closes this connection, and the
    /// source connects again (each attempt bounded by the connect timeout, the host resolved
    /// anew). A listening connection sees nothing otherwise: it only reads.
    ///
    /// 1 s is far beyond a `SELECT 1`'s time on a loaded machine (milliseconds, a network's
    /// round trip included) and short enough that with the interval a request meets the
    /// database's silence within 1.5 s, inside the 2 s in which DESIGN §8 answers it.
    ///
    /// Only a deadline the process was awake to see counts (`SilenceTimer`): a timer that fires
    /// late by more than `heartbeatStarvation` says that this process, not the database, was
    /// held up (a machine whose cores are all taken), and the answer may be waiting unread
    /// behind it; the deadline is counted again from then. Seen on a two-core test machine: a
    /// heartbeat taken for silence there answered every request 503 for the seconds until a new
    /// connection was made. For the same reason the answer stops the timer on the connection's
    /// event loop, where it arrives, and not once the heartbeat's task is given a thread again.
    private func heartbeat(on connection: PostgresConnection, into continuation: Events.Continuation) async throws {
        let logger = logger
        while true {
            try await Task.sleep(for: Self.heartbeatInterval)
            let silent = SilenceTimer(on: connection.eventLoop, deadline: Self.heartbeatDeadline, starvation: Self.heartbeatStarvation) {
                guard !connection.isClosed else { return }
                logger.warning("the database did not answer the LISTEN connection's heartbeat: it cannot be reached; connecting again",
                               metadata: ["deadline": "\(Self.heartbeatDeadline)"])
                continuation.yield(.silent)
                _ = connection.close() as EventLoopFuture<Void>
            }
            defer { silent.cancel() }
            try await SessionLimits.withStatementDeadline(nil) {
                try await connection.sentOnItsLoop { connection in
                    // A text of its own, so that operators tell it in `pg_stat_activity` from a ping.
                    _ = try await connection.query("SELECT 'listening' AS heartbeat", logger: logger)
                    // Here, on the connection's event loop, as the answer arrives: not once this
                    // task runs again on a thread of its own executor, which may be held up for
                    // longer than the deadline (tests that took every core of the process; seen
                    // as 503s in CI while the database answered in milliseconds).
                    silent.cancel()
                }
            }
        }
    }

    /// How late the heartbeat's timer may fire before the lateness is taken for this process's
    /// own (`SilenceTimer`).
    static let heartbeatStarvation: Duration = .milliseconds(250)

    /// Listens on every channel of `connection` for as long as it lasts, and says when `LISTEN`
    /// is in place on all of them. A notification that does not decode is logged and skipped.
    private func listen(on connection: PostgresConnection, resumed: Bool, into continuation: Events.Continuation) async throws {
        let channels = channels, logger = logger, tasksExecutor = tasksExecutor
        try await connection.untilClosed { connection in
            let notListening = Countdown(channels.count)
            // The source's own tasks run where it was told (a test holds their thread up).
            try await withTaskExecutorPreference(tasksExecutor) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for channel in channels {
                        group.addTask {
                            let decoder = JSONDecoder()
                            try await connection.listen(on: channel.name) { notifications in
                                if notListening.countDown() { continuation.yield(.listening(resumed: resumed)) }
                                for try await notification in notifications {
                                    guard let event = channel.event(decoding: notification.payload, with: decoder) else {
                                        logger.warning("ignoring an unreadable notification", metadata: [
                                            "channel": "\(channel.name)", "payload": "\(notification.payload)",
                                        ])
                                        continue
                                    }
                                    continuation.yield(event)
                                }
                            }
                        }
                    }
                    // A LISTEN not in place within `listenDeadline` ends this connection, and the next
                    // attempt makes a new one: seen on a loaded machine, a connection whose LISTEN
                    // never answered held the source deaf (PostgresNIO can drop a statement written
                    // as its session ends: docs/postgresnio-race.md). Once listening, it only waits.
                    group.addTask {
                        try await Task.sleep(for: Self.listenDeadline)
                        guard notListening.isDone else { throw ListenTimedOut() }
                        while true { try await Task.sleep(for: .seconds(3_600)) }
                    }
                    group.addTask { try await heartbeat(on: connection, into: continuation) }
                    // The first channel to end ends the others: the connection is gone.
                    try await group.next()
                    group.cancelAll()
                }
            }
        }
    }
}

/// Calls `silent` once `deadline` has passed with the process awake to see it: when the timer
/// fires later than `starvation` past its due time, the event loop (and so whatever answer came
/// meanwhile) was held up, and it is armed again for a whole `deadline` from then — at most
/// `maximumRearms` times, so that a process starved for good still notices a silent database
/// within seconds. `cancel` ends it.
final class SilenceTimer: Sendable {
    private let eventLoop: any EventLoop
    private let deadline: TimeAmount
    private let starvation: TimeAmount
    private let silent: @Sendable () -> Void
    private let scheduled = Mutex<(task: Scheduled<Void>?, cancelled: Bool)>((nil, false))
    static let maximumRearms = 4

    init(on eventLoop: any EventLoop, deadline: Duration, starvation: Duration, silent: @escaping @Sendable () -> Void) {
        self.eventLoop = eventLoop
        self.deadline = .nanoseconds(deadline.inNanoseconds)
        self.starvation = .nanoseconds(starvation.inNanoseconds)
        self.silent = silent
        arm(rearms: 0)
    }

    private func arm(rearms: Int) {
        let due = NIODeadline.now() + deadline
        let task = eventLoop.scheduleTask(deadline: due) { [self] in
            if rearms < Self.maximumRearms, NIODeadline.now() - due > starvation {
                arm(rearms: rearms + 1)
            } else {
                silent()
            }
        }
        let stillWanted = scheduled.withLock { state in
            guard !state.cancelled else { return false }
            state.task = task
            return true
        }
        if !stillWanted { task.cancel() }
    }

    func cancel() {
        let task = scheduled.withLock { state in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }
}

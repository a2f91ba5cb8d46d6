import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Synchronization
import Testing

private let logger = TestDatabase.shared.logger

/// The database's notifications as one sequence that outlives its connections.
@Suite struct NotificationSourceTests {
    @Test func notificationsArriveAndAfterTheServerEndsTheSessionTheSourceReconnectsAndSaysSo() async throws {
        try await TestDatabase.withClient { client, url in
            let source = NotificationSource(.dedicated(try url.connectionConfiguration()), logger: logger)
            let seen = SeenEvents()
            let changed = ProjectionNotification(sender: UUID(), versions: [UUID(): 3, UUID(): 17])
            let signedOut = DeviceSignedOut(accountId: UUID(), deviceId: UUID())
            let erased = AccountErased(accountId: UUID())
            let later = ProjectionNotification(sender: nil, versions: [changed.versions.keys.first!: 4])
            try await source.withEvents { events in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { for await event in events { seen.append(event) } }
                    // On a loaded machine the first connection may fail or its LISTEN outlast its
                    // deadline; the source then connects again, and says it listens once it does.
                    try await eventually("the source listens", timeout: .seconds(60)) {
                        seen.all.contains { if case .listening = $0 { true } else { false } }
                    }

                    // A payload that does not decode is skipped; the next one on its channel arrives.
                    try await notify(ProjectionNotification.channel, "not a notification", client: client)
                    try await notify(ProjectionNotification.channel, ProjectionNotification.payloads(sender: changed.sender, versions: changed.versions)[0], client: client)
                    try await eventually("the change arrives") { seen.all.contains(.projection(changed)) }
                    try await notify(signedOut, on: DeviceSignedOut.channel, client: client)
                    try await eventually("the sign-out arrives") { seen.all.contains(.deviceSignedOut(signedOut)) }
                    try await notify(erased, on: AccountErased.channel, client: client)
                    try await eventually("the erasure arrives") { seen.all.contains(.accountErased(erased)) }

                    // The server ends the LISTEN session: the source connects again and says that it resumed.
                    let terminated = try await client.query(PostgresQuery(unsafeSQL: """
                        SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity
                        WHERE datname = current_database() AND pid <> pg_backend_pid() AND \(ListenSession.predicate)
                        """)).decode(Int64.self).collectAll()
                    #expect(terminated == [1])
                    try await eventually("the source listens again") { seen.all.contains(.listening(resumed: true)) }
                    try await notify(ProjectionNotification.channel, ProjectionNotification.payloads(sender: nil, versions: later.versions)[0], client: client)
                    try await eventually("a change after the reconnect arrives") { seen.all.contains(.projection(later)) }
                    group.cancelAll()
                }
            }
            // Exactly what happened after it first listened.
            #expect(afterFirstListening(seen.all) == [
                .projection(changed), .deviceSignedOut(signedOut), .accountErased(erased),
                .connected, .listening(resumed: true),
                .projection(later),
            ])
        }
    }

    @Test func aDatabaseThatCannotBeReachedIsReportedAndTriedAgain() async throws {
        // Nothing listens on port 1 of the loopback address: every attempt is refused at once.
        let nowhere = PostgresConnection.Configuration(host: "127.0.0.1", port: 1, username: "nobody", password: nil, database: nil, tls: .disable)
        let source = NotificationSource(.dedicated(nowhere), channels: [.projection], logger: logger)
        let attempts = try await source.withEvents { events in
            var attempts: [NotificationSource.Event] = []
            for await event in events {
                attempts.append(event)
                if attempts.count == 2 { break }
            }
            return attempts
        }
        #expect(attempts == [.unreachable, .unreachable])
    }
}

/// One LISTEN session for several listeners of a process (`SharedNotifications`).
@Suite struct SharedNotificationsTests {
    static func listenSessions(_ client: PostgresClient) async throws -> Int64 {
        try await client.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND \(ListenSession.predicate)"))
            .decode(Int64.self).collectAll().first ?? 0
    }

    /// Each listener gets every event; one that joins while the source listens is told so first;
    /// the last one to leave ends the session.
    @Test func listenersShareOneSessionAndALateOneIsToldWhereItStands() async throws {
        try await TestDatabase.withClient { client, url in
            let shared = SharedNotifications(NotificationSource(.dedicated(try url.connectionConfiguration()), logger: logger))
            let change = ProjectionNotification(sender: UUID(), versions: [UUID(): 5])
            let (first, second) = (SeenEvents(), SeenEvents())
            func listen(_ seen: SeenEvents) async throws {
                try await shared.withEvents { events in
                    for await event in events {
                        seen.append(event)
                        if event == .projection(change) { return }
                    }
                }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await listen(first) }
                // On a loaded machine the first connection may fail or its LISTEN outlast its
                // deadline; the source then connects again (as in the test above).
                try await eventually("the first listens", timeout: .seconds(60)) {
                    first.all.contains { if case .listening = $0 { true } else { false } }
                }
                group.addTask { try await listen(second) }
                try await eventually("the second is told that it listens") { second.all.contains(.listening(resumed: false)) }
                #expect(shared.listenerCount == 2)
                #expect(try await Self.listenSessions(client) == 1)
                try await notify(ProjectionNotification.channel, ProjectionNotification.payloads(sender: change.sender, versions: change.versions)[0], client: client)
                try await group.waitForAll()
            }
            #expect(afterFirstListening(first.all) == [.projection(change)])
            // The second joined a source that listens: nothing was lost for it.
            #expect(second.all == [.connected, .listening(resumed: false), .projection(change)])
            #expect(shared.listenerCount == 0)
            try await eventually("the session ended with the last listener") { try await Self.listenSessions(client) == 0 }
        }
    }
}

/// What a source said after it first listened, having checked what came before: connections
/// tried, the last one made, then listening (resumed only if an earlier attempt failed).
func afterFirstListening(_ all: [NotificationSource.Event]) -> [NotificationSource.Event] {
    let first = all.firstIndex { if case .listening = $0 { true } else { false } } ?? all.endIndex
    #expect(first > 0 && all[first - 1] == .connected, "\(all)")
    #expect(all[..<first].allSatisfy { $0 == .connected || $0 == .unreachable }, "\(all)")
    #expect(all[first...].first == .listening(resumed: all[..<first].count > 1), "\(all)")
    return Array(all.dropFirst(first + 1))
}

func notify(_ channel: String, _ payload: String, client: PostgresClient) async throws {
    try await client.query("SELECT pg_notify(\(channel), \(payload))")
}

func notify(_ notification: some Encodable, on channel: String, client: PostgresClient) async throws {
    try await notify(channel, String(decoding: try JSONEncoder().encode(notification), as: UTF8.self), client: client)
}

/// Every event the source yielded, in order.
final class SeenEvents: Sendable {
    private let events = Mutex<[NotificationSource.Event]>([])

    var all: [NotificationSource.Event] { events.withLock { $0 } }

    func append(_ event: NotificationSource.Event) {
        events.withLock { $0.append(event) }
    }
}

/// Announcements are coalesced (DESIGN §6): many accounts per notification, each payload below
/// PostgreSQL's 8000 bytes, read back exactly.
@Suite struct ProjectionNotificationTests {
    @Test func manyAccountsFitInFewPayloadsEachBelowTheLimitAndReadBackExactly() throws {
        var random = SeededGenerator(seed: 18)
        let versions = Dictionary(uniqueKeysWithValues: (0..<1_000).map { _ in (random.uuid(), Int64.random(in: 1...Int64(1) << 53, using: &random)) })
        let sender = random.uuid()
        let payloads = ProjectionNotification.payloads(sender: sender, versions: versions)
        #expect(payloads.allSatisfy { $0.utf8.count <= ProjectionNotification.maximumPayloadBytes })
        #expect(payloads.count <= 1_000 * 60 / ProjectionNotification.maximumPayloadBytes + 1)
        var read: [UUID: Int64] = [:]
        for payload in payloads {
            let notification = try #require(ProjectionNotification(payload: payload))
            #expect(notification.sender == sender)
            read.merge(notification.versions) { _, new in new }
        }
        #expect(read == versions)
        #expect(ProjectionNotification.payloads(sender: nil, versions: [:]).isEmpty)
        #expect(ProjectionNotification(payload: "x;y:1") == nil)
    }
}

/// The commit time a server's batch carries to the others (issue 33's freshness).
@Suite struct ProjectionNotificationCommitTimeTests {
    @Test func theCommitTimeRidesAsTheNilAccountAndOlderPayloadsHaveNone() {
        let versions = [UUID(): Int64(3), UUID(): 7]
        let payloads = ProjectionNotification.payloads(sender: UUID(), versions: versions, committedAt: 1_767_571_200_123)
        let read = payloads.compactMap(ProjectionNotification.init(payload:))
        #expect(read.count == payloads.count)
        #expect(read.first?.versions == versions, "the carrier is no account")
        #expect(read.first?.committedAt == 1_767_571_200_123)
        let older = ProjectionNotification.payloads(sender: nil, versions: versions).compactMap(ProjectionNotification.init(payload:))
        #expect(older.first?.committedAt == nil && older.first?.versions == versions)
        #expect(ProjectionNotification.payloads(sender: nil, versions: [:], committedAt: 5).isEmpty, "nothing to announce, nothing sent")
    }
}

/// The traces a server's batch carries to the others (issue 33's tracing): each account's
/// `traceparent` rides in its entry, within the payload limit; a payload without one reads as
/// before, and a trace not of the header's shape is dropped, never the poke.
@Suite struct ProjectionNotificationTraceTests {
    @Test func eachAccountsTraceRidesInItsEntryWithinTheLimit() throws {
        var random = SeededGenerator(seed: 33)
        let accounts = (0..<400).map { _ in random.uuid() }
        let versions = Dictionary(uniqueKeysWithValues: accounts.map { ($0, Int64.random(in: 1...1_000_000, using: &random)) })
        let traces = Dictionary(uniqueKeysWithValues: accounts.prefix(300).map { account in
            (account, "00-\(String(repeating: "a", count: 30))\(String(format: "%02x", account.uuid.0))-\(String(repeating: "b", count: 16))-01")
        })
        let payloads = ProjectionNotification.payloads(sender: nil, versions: versions, committedAt: 5, traces: traces)
        #expect(payloads.allSatisfy { $0.utf8.count <= ProjectionNotification.maximumPayloadBytes })
        var read = ProjectionNotification(sender: nil, versions: [:])
        for payload in payloads {
            let notification = try #require(ProjectionNotification(payload: payload))
            #expect(notification.committedAt == 5)
            read.versions.merge(notification.versions) { _, new in new }
            read.traces.merge(notification.traces) { _, new in new }
        }
        #expect(read.versions == versions)
        #expect(read.traces == traces, "the 100 accounts without a trace have none")
    }

    @Test func aTraceNotOfTheHeadersShapeIsDroppedAndThePokeKept() throws {
        let account = UUID()
        let lower = account.uuidString.lowercased()
        for bad in ["00-abc-def-01", "00-\(String(repeating: "g", count: 32))-\(String(repeating: "b", count: 16))-01", "x"] {
            let notification = try #require(ProjectionNotification(payload: ";\(lower):4:\(bad)"), "\(bad)")
            #expect(notification.versions == [account: 4])
            #expect(notification.traces.isEmpty, "\(bad)")
            // Nor is one sent.
            let sent = ProjectionNotification.payloads(sender: nil, versions: [account: 4], traces: [account: bad])
            #expect(sent == [";\(lower):4"], "\(bad)")
        }
        #expect(ProjectionNotification(payload: ";\(lower):4:a:b") == nil, "four fields are no entry")
    }
}

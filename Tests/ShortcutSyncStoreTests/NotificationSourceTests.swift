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
            let changed = ProjectionNotification(accountId: UUID(), version: 3, position: 17)
            let signedOut = DeviceSignedOut(accountId: UUID(), deviceId: UUID())
            let erased = AccountErased(accountId: UUID())
            let later = ProjectionNotification(accountId: changed.accountId, version: 4, position: 18)
            try await source.withEvents { events in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { for await event in events { seen.append(event) } }
                    try await eventually("the source listens") { seen.all.contains(.listening(resumed: false)) }

                    // A payload that does not decode is skipped; the next one on its channel arrives.
                    try await notify(ProjectionNotification.channel, "not json", client: client)
                    try await notify(changed, on: ProjectionNotification.channel, client: client)
                    try await eventually("the change arrives") { seen.all.contains(.projection(changed)) }
                    try await notify(signedOut, on: DeviceSignedOut.channel, client: client)
                    try await eventually("the sign-out arrives") { seen.all.contains(.deviceSignedOut(signedOut)) }
                    try await notify(erased, on: AccountErased.channel, client: client)
                    try await eventually("the erasure arrives") { seen.all.contains(.accountErased(erased)) }

                    // The server ends the LISTEN session: the source connects again and says that it resumed.
                    let terminated = try await client.query("""
                        SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity
                        WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ILIKE 'LISTEN%'
                        """).decode(Int64.self).collectAll()
                    #expect(terminated == [1])
                    try await eventually("the source listens again") { seen.all.contains(.listening(resumed: true)) }
                    try await notify(later, on: ProjectionNotification.channel, client: client)
                    try await eventually("a change after the reconnect arrives") { seen.all.contains(.projection(later)) }
                    group.cancelAll()
                }
            }
            #expect(seen.all == [
                .connected, .listening(resumed: false),
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

private func notify(_ channel: String, _ payload: String, client: PostgresClient) async throws {
    try await client.query("SELECT pg_notify(\(channel), \(payload))")
}

private func notify(_ notification: some Encodable, on channel: String, client: PostgresClient) async throws {
    try await notify(channel, String(decoding: try JSONEncoder().encode(notification), as: UTF8.self), client: client)
}

/// Every event the source yielded, in order.
private final class SeenEvents: Sendable {
    private let events = Mutex<[NotificationSource.Event]>([])

    var all: [NotificationSource.Event] { events.withLock { $0 } }

    func append(_ event: NotificationSource.Event) {
        events.withLock { $0.append(event) }
    }
}

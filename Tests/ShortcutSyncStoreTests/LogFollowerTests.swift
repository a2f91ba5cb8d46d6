import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain
@testable import ShortcutSyncStore
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncTestSupport
import Synchronization
import Testing

/// Reading the log in order while writers commit out of order (DESIGN §6).
@Suite struct LogFollowerTests {
    /// Inserts one event in a transaction that is held open until `release` is called.
    func insertHeldOpen(_ client: PostgresClient, account: UUID, device: UUID, inserted: @escaping @Sendable () -> Void,
                        release: AsyncStream<Void>) async throws -> Int64 {
        try await client.withConnection { connection in
            try await connection.query("BEGIN", logger: TestDatabase.shared.logger)
            let position = try await connection.query("""
                INSERT INTO events (account_id, stream_version, device_id, seq, event_id, type, hlc_wall, hlc_counter, body)
                VALUES (\(account), 1, \(device), 1, \(UUID()), 'appsReported', 1, 0, '{"installed":[]}')
                RETURNING position
                """, logger: TestDatabase.shared.logger).decode(Int64.self).collectAll().first!
            inserted()
            for await _ in release { break }
            try await connection.query("COMMIT", logger: TestDatabase.shared.logger)
            return position
        }
    }

    @Test func anEarlierPositionCommittedLaterIsNotSkipped() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = PostgresEventStore(client: client, logger: TestDatabase.shared.logger)
            let (inserted, insertedSignal) = AsyncStream<Void>.makeStream()
            let (release, releaseSignal) = AsyncStream<Void>.makeStream()

            async let held = insertHeldOpen(client, account: UUID(), device: UUID(), inserted: { insertedSignal.yield() }, release: release)
            for await _ in inserted { break }

            // A later writer commits while the earlier transaction is still open.
            let later = try await store.append(events(1), account: UUID(), device: UUID())
            // The follower must not pass the open transaction: it sees nothing yet.
            #expect(try await store.readLog(after: .start, limit: 100).isEmpty)

            releaseSignal.yield()
            let heldPosition = try await held
            #expect(heldPosition < later.position)
            // Transactions of other tests in the cluster can hold the horizon back a moment longer.
            let read = try await store.readLogEventually(after: .start, count: 2)
            #expect(read.map(\.position) == [heldPosition, later.position])
        }
    }

    @Test func aFollowerSeesEveryEventOnceAndInOrderWhileWritersAppend() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = PostgresEventStore(client: client, logger: TestDatabase.shared.logger)
            let writers = 6, batches = 20, size = 5
            let total = writers * batches * size
            let done = Atomic(false)

            async let followed: [RecordedEvent] = {
                var seen: [RecordedEvent] = []
                var checkpoint = LogCheckpoint.start
                while seen.count < total {
                    let page = try await store.readLog(after: checkpoint, limit: 37)
                    if page.isEmpty {
                        // Once every writer is done, the rest must come within the deadline (other
                        // tests' transactions in the cluster can hold the horizon back a moment).
                        if done.load(ordering: .acquiring) {
                            seen += try await store.readLogEventually(after: checkpoint, count: total - seen.count)
                            break
                        }
                        try await Task.sleep(for: .milliseconds(2))
                        continue
                    }
                    seen += page
                    checkpoint = page.last!.checkpoint
                }
                return seen
            }()

            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        // Half of the writers share an account, so their appends also race on its stream version.
                        let account = writer % 2 == 0 ? UUID(uuidString: "00000000-0000-0000-0000-0000000000AA")! : UUID()
                        let device = UUID()
                        for batch in 0..<batches {
                            _ = try await store.append(events(size, from: Int64(batch * size + 1)), account: account, device: device)
                        }
                    }
                }
                try await group.waitForAll()
            }
            done.store(true, ordering: .releasing)

            let seen = try await followed
            #expect(seen.count == total)
            #expect(Set(seen.map(\.position)).count == total)
            let keys = seen.map(\.checkpoint)
            #expect(keys == keys.sorted())
            // Within each device the follower met the seqs in the order they were accepted.
            for (_, deviceEvents) in Dictionary(grouping: seen, by: \.deviceId) {
                #expect(deviceEvents.map(\.event.seq) == Array(1...Int64(batches * size)))
            }
        }
    }
}

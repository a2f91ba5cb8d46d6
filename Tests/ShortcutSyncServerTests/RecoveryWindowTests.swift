import Foundation
@testable import ShortcutSyncClient
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import Synchronization
import Testing

/// The client library's recovery window (docs/client-library.md, "Giving back what the database
/// lost") against a stand-in service whose log a test can cut back, as a restored backup does:
/// what it keeps, for how long, how much, and what it sends again.
@Suite struct RecoveryWindowTests {
    /// A service that stores pushes as the real one checks them (seqs contiguous from its last),
    /// answers pulls with no change and its last seq, and can lose its newest events.
    final class StandIn: SyncTransport {
        struct Log { var events: [Event] = []; var pushes: [[Event]] = [] }
        let log = Mutex(Log())
        var events: [Event] { log.withLock { $0.events } }
        var pushes: [[Event]] { log.withLock { $0.pushes } }

        /// A restore of a backup that held the first `count` events.
        func restore(keeping count: Int) { log.withLock { $0.events = Array($0.events.prefix(count)) } }

        func push(_ events: [Event]) async throws -> PushOutcome {
            log.withLock { log in
                log.pushes.append(events)
                let last = log.events.last?.seq ?? 0
                guard events.first?.seq == last + 1 else { return .seqMismatch(expectedSeq: last + 1) }
                log.events += events
                return .accepted(lastAcceptedSeq: events.last!.seq, version: Int64(log.events.count))
            }
        }

        func pull(cursor: String?, waitFor version: Int64?, timeoutMillis: Int?) async throws -> PullAnswer {
            let last = log.withLock { $0.events.last?.seq ?? 0 }
            return PullAnswer(cursor: "cursor", reset: cursor == nil, more: false, changes: ViewChanges(), serviceClock: .zero,
                              lastAcceptedSeq: last)
        }

        func pokes() async throws -> AsyncThrowingStream<Int64, any Error> {
            AsyncThrowingStream { $0.finish() }
        }
    }

    /// A device's clock the test moves.
    final class Clock: Sendable {
        let millis = Atomic<Int64>(1_764_000_000_000)
        func advance(days: Int64) { millis.add(days * 86_400_000, ordering: .relaxed) }
    }

    static func client(_ service: StandIn, storage: String, window: RecoveryWindow = .standard, clock: Clock = Clock()) throws -> ShortcutSyncClient {
        var configuration = ShortcutSyncClient.Configuration(bundleId: "com.example.soup", storagePath: storage)
        configuration.recoveryWindow = window
        configuration.now = { clock.millis.load(ordering: .relaxed) }
        configuration.utcOffsetMinutes = { _ in 60 }
        return try ShortcutSyncClient(configuration: configuration, transport: service, logger: TestDatabase.shared.logger)
    }

    static func donation(_ index: Int) -> IntentDonation {
        IntentDonation(intentType: "OrderSoupIntent", identifier: "soup-\(index)", title: "Soup number \(index)", groupIdentifier: "soups")
    }

    /// The service loses the last two of five acknowledged events; the device has one more
    /// waiting. Its push gets `expectedSeq` 4: the kept 4 and 5 go first, as they were (ids, seqs,
    /// clocks), then the waiting one as 6.
    @Test func keptChangesGoBackAsTheyWereBeforeWhatWaits() async throws {
        let service = StandIn()
        let storage = ClientLibraryTests.storage()
        defer { try? FileManager.default.removeItem(atPath: storage) }
        let client = try Self.client(service, storage: storage)
        for index in 1...5 { try await client.donate(Self.donation(index)) }
        try await client.sync()
        let acknowledged = service.events
        #expect(try await client.keptChanges().events == 5)

        service.restore(keeping: 3)
        let waiting = try await client.donate(Self.donation(6))
        try await client.sync()
        #expect(Array(service.events.prefix(5)) == acknowledged, "the lost ones came back exactly as they were")
        #expect(service.events.map(\.seq) == [1, 2, 3, 4, 5, 6])
        #expect(service.events.last?.id == waiting)
        #expect(try await client.pendingCount() == 0)
        #expect(try await client.keptChanges().events == 6)
    }

    /// Nothing waits: the pull's `lastAcceptedSeq` shows the loss, and `sync` gives them back.
    @Test func aPullThatShowsTheLossGivesBackToo() async throws {
        let service = StandIn()
        let storage = ClientLibraryTests.storage()
        defer { try? FileManager.default.removeItem(atPath: storage) }
        let client = try Self.client(service, storage: storage)
        for index in 1...4 { try await client.donate(Self.donation(index)) }
        try await client.sync()
        let acknowledged = service.events
        service.restore(keeping: 1)
        try await client.sync()
        #expect(service.events == acknowledged)
        // A service that lost nothing: nothing is sent again.
        let pushes = service.pushes.count
        try await client.sync()
        #expect(service.pushes.count == pushes)
    }

    /// The window lets go of the oldest past its count, its bytes and its duration; what it no
    /// longer holds cannot come back, and the rest is numbered on from what the service holds
    /// (ids and clocks kept).
    @Test func theWindowIsBounded() async throws {
        let storage = ClientLibraryTests.storage()
        defer { try? FileManager.default.removeItem(atPath: storage) }
        let clock = Clock()
        let service = StandIn()
        let window = RecoveryWindow(duration: .seconds(30 * 86_400), maximumEvents: 5, maximumBytes: 1 << 20)
        let client = try Self.client(service, storage: storage, window: window, clock: clock)
        for index in 1...8 { try await client.donate(Self.donation(index)) }
        try await client.sync()
        #expect(try await client.keptChanges().events == 5)

        // 31 days on, one more: the others are older than the window.
        clock.advance(days: 31)
        try await client.donate(Self.donation(9))
        try await client.sync()
        #expect(try await client.keptChanges().events == 1)

        // The service loses 8 and 9: only 9 is kept; it goes back as seq 8, id and clock kept.
        let nine = service.events[8]
        service.restore(keeping: 7)
        try await client.sync()
        #expect(service.events.count == 8)
        #expect(service.events[7].id == nine.id && service.events[7].hlc == nine.hlc && service.events[7].seq == 8)

        // Bytes: 1,000 bytes of JSON hold a few donations, not ten.
        let bytesStorage = ClientLibraryTests.storage()
        defer { try? FileManager.default.removeItem(atPath: bytesStorage) }
        let small = try Self.client(StandIn(), storage: bytesStorage,
                                    window: RecoveryWindow(duration: .seconds(86_400), maximumEvents: 100, maximumBytes: 1_000))
        for index in 1...10 { try await small.donate(Self.donation(index)) }
        try await small.sync()
        let kept = try await small.keptChanges()
        #expect(kept.bytes <= 1_000 && kept.events >= 1 && kept.events < 10)
    }

    /// What the recovery window costs a device: its SQLite file with 2,000 kept donations, against
    /// the same device keeping none (docs/benchmarks.md; a full window of 10,000 costs five times it).
    @Test func whatAFullWindowCostsTheDevicesFile() async throws {
        func fileBytes(keeping window: RecoveryWindow) async throws -> (file: Int, json: Int) {
            let storage = ClientLibraryTests.storage()
            defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: storage + suffix) } }
            do {
                let client = try Self.client(StandIn(), storage: storage, window: window)
                for index in 1...2_000 { try await client.donate(Self.donation(index)) }
                try await client.sync()
                #expect(try await client.keptChanges().events == min(2_000, window.maximumEvents))
                let json = try await client.keptChanges().bytes
                let file = try ClientStore(path: storage).checkpointedSize()
                return (file, json)
            }
        }
        let none = try await fileBytes(keeping: RecoveryWindow(duration: .seconds(86_400), maximumEvents: 0, maximumBytes: 0))
        let full = try await fileBytes(keeping: .standard)
        let perEvent = Double(full.file - none.file) / 2_000
        print("recovery window: 2,000 kept donations add \(full.file - none.file) bytes to the device's file "
              + "(\(Int(perEvent)) a kept event; \(full.json / 2_000) bytes of JSON each)")
        #expect(Double(full.json) * 5 <= Double(RecoveryWindow.standard.maximumBytes), "a full window's events fit its bytes")
        #expect(perEvent > 0 && perEvent < 1_000)
    }
}

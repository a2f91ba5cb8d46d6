import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

@Suite struct EventStoreTests {
    let account = UUID()
    let device = UUID()

    /// The log, with the suite's account made.
    func openStore(_ client: PostgresClient) async throws -> PostgresEventStore {
        try await openAccount(account, client: client)
        return PostgresEventStore(client: client, logger: TestDatabase.shared.logger)
    }

    @Test func appendedEventsReadBackUnchanged() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = try await openStore(client)
            let batch = events(3) + [Event(seq: 4, hlc: HLCTimestamp(wallMillis: 5, counter: 2),
                                           body: .deletion(Deletion(bundleId: "com.example.soup", selector: .groupIdentifier("g"))))]
            let result = try await store.append(batch, account: account, device: device)
            #expect(result.appended == 4)
            #expect(result.lastAcceptedSeq == 4)
            #expect(result.version == 4)
            #expect(result.folded)
            let stored = try await store.readStream(account: account, after: 0, limit: 100)
            #expect(stored.map(\.event) == batch)
            #expect(stored.map(\.version) == [1, 2, 3, 4])
            #expect(stored.allSatisfy { $0.deviceId == device && $0.accountId == account })
        }
    }

    /// The fold's read of the log (`readFoldLog`) gives each event as it reads whole, a
    /// deletion's identifiers and a report's apps too (their JSON array read here, not by the
    /// server): quotes, backslashes, letters of other scripts, a string that reads "null"; and
    /// every other kind of event, whose own fields come in one JSON column. A list that is not
    /// one of strings, or a voice shortcut's id that is not a UUID, is a corrupt row, refused.
    @Test func theFoldsReadOfTheLogGivesEveryEventAsItReadsWhole() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = try await openStore(client)
            let identifiers = ["soup \"hot\"", "back\\slash", "суп-😀", "null", "[1]"]
            let voice = UUID()
            let batch = events(2) + [
                Event(seq: 3, hlc: HLCTimestamp(wallMillis: 5, counter: 0), body: .deletion(Deletion(bundleId: "com.example.soup", selector: .identifiers(identifiers)))),
                Event(seq: 4, hlc: HLCTimestamp(wallMillis: 6, counter: 0), body: .deletion(Deletion(bundleId: "com.example.soup", selector: .all))),
                Event(seq: 5, hlc: HLCTimestamp(wallMillis: 7, counter: 0), body: .appsReported(AppsReported(installed: ["com.example.soup", "com.example.tea"]))),
                // The fields only the other events have, which come in one column (`FoldLogCoding.Extras`).
                Event(seq: 6, hlc: HLCTimestamp(wallMillis: 8, counter: 0), body: .voiceShortcutAdded(VoiceShortcutAdded(
                    voiceShortcutId: voice, phrase: "Order \"soup\"\\now", bundleId: "com.example.soup", identifier: "soup-1", title: "Суп 😀\n"))),
                Event(seq: 7, hlc: HLCTimestamp(wallMillis: 9, counter: 0), body: .voiceShortcutUpdated(VoiceShortcutUpdated(voiceShortcutId: voice, phrase: "null"))),
                Event(seq: 8, hlc: HLCTimestamp(wallMillis: 10, counter: 0), body: .voiceShortcutDeleted(VoiceShortcutDeleted(voiceShortcutId: voice))),
                Event(seq: 9, hlc: HLCTimestamp(wallMillis: 11, counter: 0), body: .learningForgotten(LearningForgotten(scope: .device(device)))),
                Event(seq: 10, hlc: HLCTimestamp(wallMillis: 12, counter: 0), body: .learningForgotten(LearningForgotten(
                    scope: .shortcut(ShortcutID(bundleId: "com.example.soup", identifier: "soup-1"))))),
                Event(seq: 11, hlc: HLCTimestamp(wallMillis: 13, counter: 0), body: .learningForgotten(LearningForgotten(scope: .place(0xA7)))),
                Event(seq: 12, hlc: HLCTimestamp(wallMillis: 14, counter: 0), body: .learningPaused(LearningPaused(scope: .account, paused: true))),
                Event(seq: 13, hlc: HLCTimestamp(wallMillis: 15, counter: 0), body: .learningPaused(LearningPaused(scope: .device(device), paused: false))),
            ]
            try await openDevices([device], of: account, client: client)
            _ = try await store.append(batch, account: account, device: device)
            let read = try await client.withConnection { connection in
                try await store.readFoldLog(ofAccount: account, versions: 1...13, on: connection)
            }
            let whole = try await store.readStream(account: account, after: 0, limit: 100).map(FoldLogEntry.init)
            #expect(read == whole)
            guard case .deletion(let deletion) = read[2].event.change else { Issue.record("\(read[2])"); return }
            #expect(deletion.selector == .identifiers(identifiers))

            // The log is append-only: the corrupt event is one more, written past the store.
            try await client.query("""
                INSERT INTO events (account_id, version, device_id, seq, event_id, type, hlc_wall, hlc_counter, body, history)
                VALUES (\(account), 14, \(device), 14, \(UUID()), 'deletion', 16, 0, '{"bundleId": "com.example.soup", "identifiers": [1, 2]}', 1),
                       (\(account), 15, \(device), 15, \(UUID()), 'voiceShortcutDeleted', 17, 0, '{"voiceShortcutId": "not-a-uuid"}', 1)
                """, logger: TestDatabase.shared.logger)
            for version in [14, 15] as [Int64] {
                await #expect(throws: StoreError.self) {
                    try await client.withConnection { connection in
                        try await store.readFoldLog(ofAccount: account, versions: version...version, on: connection)
                    }
                }
            }
        }
    }

    @Test func retriedBatchStoresNothingTwice() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = try await openStore(client)
            let batch = events(5)
            let first = try await store.append(batch, account: account, device: device)
            let retry = try await store.append(batch, account: account, device: device)
            #expect(retry.appended == 0)
            #expect(retry.lastAcceptedSeq == 5)
            #expect(retry.version == first.version)
            #expect(try await eventCount(client) == 5)

            // A retry that overlaps what was accepted and carries new events stores only the new ones.
            let overlapping = Array(batch[3...]) + events(2, from: 6)
            let extended = try await store.append(overlapping, account: account, device: device)
            #expect(extended.appended == 2)
            #expect(extended.lastAcceptedSeq == 7)
            #expect(try await eventCount(client) == 7)
        }
    }

    @Test func aSeqGapIsRefusedWithTheExpectedSeqAndStoresNothing() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = try await openStore(client)
            try await store.append(events(3), account: account, device: device)
            await #expect(throws: AppendError.seqNotContiguous(index: 0, expectedSeq: 4, lastAcceptedSeq: 3)) {
                try await store.append(events(2, from: 5), account: account, device: device)
            }
            // A batch with a hole inside it is refused whole, even though it starts right.
            var holed = events(3, from: 4)
            holed[2].seq = 7
            await #expect(throws: AppendError.seqNotContiguous(index: 2, expectedSeq: 6, lastAcceptedSeq: 3)) {
                try await store.append(holed, account: account, device: device)
            }
            // The first device event must be seq 1.
            await #expect(throws: AppendError.seqNotContiguous(index: 0, expectedSeq: 1, lastAcceptedSeq: 0)) {
                try await store.append(events(1, from: 2), account: account, device: UUID())
            }
            #expect(try await eventCount(client) == 3)
        }
    }

    @Test func aReusedSeqOrIdIsRefusedAndStoresNothing() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = try await openStore(client)
            let accepted = events(3)
            try await store.append(accepted, account: account, device: device)

            // seq 3 again, with another id, followed by a new event: nothing of it is stored.
            let reused = [events(1, from: 3)[0]] + events(1, from: 4)
            await #expect(throws: AppendError.seqReused(index: 0, seq: 3, lastAcceptedSeq: 3)) {
                try await store.append(reused, account: account, device: device)
            }
            // A new seq carrying the id of an accepted event.
            var sameId = events(1, from: 4)[0]
            sameId.id = accepted[0].id
            await #expect(throws: AppendError.idReused(index: 1, id: accepted[0].id)) {
                try await store.append(events(1, from: 4) + [sameId.renumbered(5)], account: account, device: device)
            }
            #expect(try await eventCount(client) == 3)
            #expect(try await store.lastAcceptedSeq(account: account, device: device) == 3)
        }
    }

    /// The log takes pushes only for an account that exists: never one that was not made, nor one
    /// erased (also not a push that waited on the account's head while the erasure took it away).
    @Test func anAccountNeverMadeOrErasedTakesNoEvents() async throws {
        try await TestDatabase.withClient { client, _ in
            let unopened = PostgresEventStore(client: client, logger: TestDatabase.shared.logger)
            await #expect(throws: AppendError.accountUnknown) {
                try await unopened.append(events(1), account: UUID(), device: device)
            }
            let store = try await openStore(client)
            try await store.append(events(2), account: account, device: device)
            _ = try await OperatorStore(client: client, logger: TestDatabase.shared.logger).erase(account: account)
            await #expect(throws: AppendError.accountUnknown) {
                try await store.append(events(1, from: 3), account: account, device: device)
            }
            #expect(try await eventCount(client) == 0)
        }
    }

    @Test func theEventsTableIsAppendOnly() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = try await openStore(client)
            try await store.append(events(1), account: account, device: device)
            await #expect(throws: PSQLError.self) { try await client.query("UPDATE events SET seq = 9") }
            await #expect(throws: PSQLError.self) { try await client.query("DELETE FROM events") }
            await #expect(throws: PSQLError.self) { try await client.query("TRUNCATE events") }
            #expect(try await eventCount(client) == 1)
        }
    }

    @Test func concurrentBatchesForOneAccountNeverLoseNorDoubleAnEvent() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = try await openStore(client)
            let devices = (0..<6).map { _ in UUID() }
            let batches = 15, size = 8
            try await withThrowingTaskGroup(of: Void.self) { group in
                for device in devices {
                    let chunks = (0..<batches).map { events(size, from: Int64($0 * size + 1)) }
                    // Each device sends every batch twice at once, as a flaky network would.
                    for _ in 0..<2 {
                        group.addTask {
                            for chunk in chunks {
                                try await appendRetryingOwnRace(store, chunk, account: account, device: device)
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let stored = try await store.readStream(account: account, after: 0, limit: 10_000)
            #expect(stored.count == devices.count * batches * size)
            #expect(stored.map(\.version) == Array(1...Int64(stored.count)))
            for device in devices {
                #expect(stored.filter { $0.deviceId == device }.map(\.event.seq).sorted() == Array(1...Int64(batches * size)))
            }
        }
    }

    @Test func migratingTwiceAppliesNothingTheSecondTime() async throws {
        try await TestDatabase.withClient { client, _ in
            let migrator = try Migrator(client: client, logger: TestDatabase.shared.logger)
            #expect(try await migrator.migrate().isEmpty)
            #expect(try await migrator.isUpToDate())
        }
    }
}

/// Two copies of one device's stream race: a copy that finds its batch's seq not yet reachable
/// (the other copy is one batch behind) waits and tries again, as a device retrying would.
/// It gives up, recording an issue, when the other copy has not caught up within `timeout`.
func appendRetryingOwnRace(_ store: PostgresEventStore, _ batch: [Event], account: UUID, device: UUID, timeout: Duration = .seconds(20)) async throws {
    var appended = false
    try await eventually("the batch at seq \(batch.first?.seq ?? 0) continues the device's seqs", timeout: timeout) {
        do {
            _ = try await store.append(batch, account: account, device: device)
            appended = true
        } catch AppendError.seqNotContiguous {
            try await Task.sleep(for: .milliseconds(1))
        }
        return appended
    }
}

extension Event {
    func renumbered(_ seq: Int64) -> Event {
        var copy = self
        copy.seq = seq
        return copy
    }
}

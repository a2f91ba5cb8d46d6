import Foundation
import PostgresNIO
@testable import ShortcutSyncBench
import ShortcutSyncDatabaseTestSupport
import Testing

/// `bench push`'s raw side appends what the pushes append: each row an event of its own (its id,
/// seq and clock), in contiguous seqs of one device, with the bench's body read into `jsonb`.
@Suite struct RawAppendTests {
    @Test func eachStatementAppendsTheNextSeqsAsEventsOfTheirOwn() async throws {
        try await TestDatabase.withClient { client, _ in
            let logger = TestDatabase.shared.logger
            try await client.query("CREATE TABLE bench_raw_events (LIKE events INCLUDING ALL)", logger: logger)
            var append = RawAppend(batch: 3)
            try await client.query(append.next(), logger: logger)
            try await client.query(append.next(), logger: logger)

            let rows = try await client.query("""
                SELECT account_id, device_id, version, seq, event_id, type, hlc_wall, hlc_counter, body = \(BenchEvents.body)::jsonb
                FROM bench_raw_events ORDER BY seq
                """, logger: logger)
            var seqs: [Int64] = [], versions: [Int64] = [], ids: Set<UUID> = [], owners: Set<[UUID]> = []
            for try await (account, device, version, seq, id, type, wall, counter, sameBody)
                in rows.decode((UUID, UUID, Int64, Int64, UUID, String, Int64, Int64, Bool).self) {
                seqs.append(seq); versions.append(version); ids.insert(id); owners.insert([account, device])
                #expect(type == "donation" && counter == 0 && wall == 1_763_712_000_000 + seq)
                #expect(sameBody, "the row's body is the bench's donation, read as JSON")
            }
            #expect(seqs == [1, 2, 3, 4, 5, 6])
            #expect(versions == seqs)
            #expect(ids.count == 6, "each row has an event id of its own")
            #expect(owners == [[append.account, append.device]])
        }
    }
}

import Foundation
import PostgresNIO
@testable import ShortcutSyncBench
import ShortcutSyncDatabaseTestSupport
import Testing

/// `bench push`'s raw side appends what the pushes append: each row an event of its own (its id,
/// seq and clock), in contiguous seqs of one device, with the bench's body read into `jsonb`; and
/// pgbench's raw appends the same, and counts only rows it appended.
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

    @Test(.enabled(if: PgbenchAppend.find() != nil, "pgbench is not installed (Debian's postgresql-client has it; .ci/run installs it)"))
    func pgbenchAppendsAsManyRowsAsItCountsEachClientInContiguousSeqs() async throws {
        let pgbench = try #require(PgbenchAppend.find())
        try await TestDatabase.withClient { client, url in
            let logger = TestDatabase.shared.logger
            try await client.query("CREATE TABLE bench_raw_events (LIKE events INCLUDING ALL)", logger: logger)
            let run = try await pgbench.run(batch: 5, clients: 2, duration: .seconds(1), database: url)
            #expect(run.transactions > 0 && run.transactionsPerSecond > 0)

            let rows = try await client.query("""
                SELECT account_id, device_id, count(*), min(seq), max(seq), count(DISTINCT event_id), bool_and(version = seq),
                       bool_and(type = 'donation' AND hlc_counter = 0 AND hlc_wall = 1763712000000 + seq),
                       bool_and(body = \(BenchEvents.body)::jsonb)
                FROM bench_raw_events GROUP BY account_id, device_id
                """, logger: logger)
            var total = 0, accounts: Set<UUID> = []
            for try await (account, _, count, first, last, ids, versions, fields, bodies)
                in rows.decode((UUID, UUID, Int, Int64, Int64, Int, Bool, Bool, Bool).self) {
                total += count
                accounts.insert(account)
                #expect(first == 1 && last == Int64(count) && count % 5 == 0, "a client's seqs run on from 1, five a transaction")
                #expect(ids == count, "each row has an event id of its own")
                #expect(versions && fields && bodies, "each row is the bench's donation at its seq, its body read as JSON")
            }
            #expect(total == run.transactions * 5, "pgbench counted the rows that are in the table")
            #expect(accounts.count == 2, "each client appends to an account of its own")
        }
    }

    @Test func pgbenchsReportIsReadForItsTransactionsAndRate() {
        let report = """
            number of transactions actually processed: 1022
            number of failed transactions: 0 (0.000%)
            tps = 511.814553 (without initial connection time)
            """
        let run = PgbenchAppend.parse(report)
        #expect(run?.transactions == 1022 && run?.transactionsPerSecond == 511.814553)
        #expect(PgbenchAppend.parse("pgbench: error: connection refused") == nil)
    }
}

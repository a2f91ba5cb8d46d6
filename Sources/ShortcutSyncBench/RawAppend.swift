import Foundation
import PostgresNIO

/// One client's raw appends (`PushBenchmark.rawInserts`): `batch`-row statements of one device of
/// one account in contiguous seqs, each row bound as the push's append binds an event (an id, a
/// seq, a type, a clock and a body each, as arrays) and its body read into `jsonb` row by row.
///
/// Before, one body was bound for all the rows and cast once a statement: PostgreSQL folded the
/// cast into a constant, and the raw rows skipped the body's parse that every pushed event pays
/// (docs/benchmarks.md, "The raw append binds its rows").
struct RawAppend {
    /// The columns a raw row fills, `PgbenchAppend`'s too.
    static let columns = "account_id, version, device_id, seq, event_id, type, hlc_wall, hlc_counter, body"

    let batch: Int
    let account = UUID(), device = UUID()
    private var ids = SplitMix64(state: UInt64.random(in: .min ... .max))
    private var nextSeq: Int64 = 1
    private let bodies: [String], types: [String], counters: [Int64]

    init(batch: Int) {
        self.batch = batch
        bodies = Array(repeating: BenchEvents.body, count: batch)
        types = Array(repeating: "donation", count: batch)
        counters = Array(repeating: 0, count: batch)
    }

    /// The next statement: the batch's rows after the last statement's.
    mutating func next() -> PostgresQuery {
        let seqs = Array(nextSeq..<(nextSeq + Int64(batch)))
        nextSeq += Int64(batch)
        let eventIDs = seqs.map { _ in ids.nextUUID() }, walls = seqs.map { 1_763_712_000_000 + $0 }
        return """
            INSERT INTO bench_raw_events (\(unescaped: RawAppend.columns))
            SELECT \(account), e.seq, \(device), e.seq, e.id, e.type, e.wall, e.counter, e.body::jsonb
            FROM unnest(\(eventIDs)::uuid[], \(seqs)::int8[], \(types)::text[], \(walls)::int8[], \(counters)::int8[], \(bodies)::text[])
                 AS e(id, seq, type, wall, counter, body)
            """
    }
}

import Foundation
import PostgresNIO
import ShortcutSyncDomain

/// A push's append and the write of its fold in one statement, committed on its own (no
/// transaction around it): the optimistic push of `PostgresEventStore` (DESIGN §6).
///
/// The fold was computed beforehand from rows read at the head `expectedVersion`. The statement
/// locks the head row, and writes only when the head is still at that version and current (its
/// folded version equal to it) and the device's last seq is still `previousSeq`: then no fold of
/// the account committed since those rows were read (every fold holds the head row and moves
/// the folded version), so the fold is exact. Otherwise it writes nothing and answers 0; the
/// push then goes the locking way.
///
/// Its text is the append's (`FoldSQL.appendHead`) followed by the fold write's arms
/// (`FoldSQL.write`), whose parameters after the account move up past the append's, and which
/// write only when the append's check passed (`go`). Both parts are whole statements of their
/// own in the sources, so that the statement check reads them.
struct AppendFoldedStatement: PostgresPreparedStatement {
    static let sql: String = {
        let head = FoldSQL.appendHead, write = FoldSQL.write
        guard let headEnd = head.range(of: "\n)\nSELECT (SELECT count(*) FROM inserted)", options: .backwards),
              let armsStart = write.range(of: "go AS (\n    SELECT 1\n), "),
              let armsEnd = write.range(of: "\n)\nSELECT 1", options: .backwards) else {
            preconditionFailure("the parts of AppendFoldedStatement's text have changed shape")
        }
        let arms = shiftingParameters(String(write[armsStart.upperBound..<armsEnd.lowerBound]), from: 2, by: appendParameters - 1)
        return head[..<headEnd.lowerBound] + "\n), " + arms + "\n)\nSELECT (SELECT count(*) FROM inserted)"
    }()

    /// The append's parameters, `$1` (the account, shared with the write) to `$10`.
    static let appendParameters = 10

    var account: UUID
    var device: UUID
    var batch: ArraySlice<Event>
    var expectedVersion: Int64
    var result: AccountBatchResult

    func makeBindings() throws -> PostgresBindings {
        let bodies = batch.map(\.body.fieldsJSON)
        var bindings = PostgresBindings(capacity: 51)
        bindings.append(account)
        bindings.append(device)
        bindings.appendColumns(of: batch, bodies: bodies)
        bindings.append(batch.first.map { $0.seq - 1 } ?? 0)
        bindings.append(expectedVersion)
        try FoldWriteStatement<LiveProjectionTables>.appendValues(
            of: result, unstored: UnstoredEvents(afterVersion: expectedVersion, events: batch, bodies: bodies), to: &bindings)
        return bindings
    }

    /// How many events it appended: the batch's count, or 0 when its check failed.
    func decodeRow(_ row: PostgresRow) throws -> Int {
        Int(try row.decode(Int64.self))
    }

    /// `sql` with each parameter `$n`, n ≥ `from`, made `$(n + by)`.
    static func shiftingParameters(_ sql: String, from: Int, by: Int) -> String {
        var shifted = ""
        var index = sql.startIndex
        while let dollar = sql[index...].firstIndex(of: "$") {
            shifted += sql[index...dollar]
            let digits = sql[sql.index(after: dollar)...].prefix(while: \.isNumber)
            if let number = Int(digits) {
                shifted += String(number >= from ? number + by : number)
            }
            index = digits.endIndex
        }
        return shifted + sql[index...]
    }
}

extension FoldSQL {
    /// The append of `AppendFoldedStatement`: the head locked and checked, the device's last seq
    /// checked, the batch inserted at the versions after the expected one, the head (and the
    /// folded version with it) moved.
    static let appendHead = """
        WITH head AS (
            SELECT version FROM account_heads WHERE account_id = $1 AND version = $10 AND folded_version = $10 FOR UPDATE
        ), device AS (
            SELECT coalesce(max(seq), 0) AS last_seq FROM events WHERE account_id = $1 AND device_id = $2
        ), go AS (
            SELECT 1 FROM head, device WHERE device.last_seq = $9
        ), inserted AS (
            INSERT INTO events (account_id, version, device_id, seq, event_id, type, hlc_wall, hlc_counter, body)
            SELECT $1, $10 + b.ord, $2, b.seq, b.event_id, b.type, b.wall, b.counter, b.body::jsonb
            FROM go, unnest($3::uuid[], $4::int8[], $5::text[], $6::int8[], $7::int8[], $8::text[])
                 WITH ORDINALITY AS b(event_id, seq, type, wall, counter, body, ord)
            RETURNING 1
        ), moved AS (
            UPDATE account_heads h SET version = h.version + n.count, folded_version = h.version + n.count
            FROM (SELECT count(*) AS count FROM inserted) n
            WHERE h.account_id = $1 AND n.count > 0
        )
        SELECT (SELECT count(*) FROM inserted)
        """
}

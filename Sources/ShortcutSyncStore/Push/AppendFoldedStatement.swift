import Foundation
import PostgresNIO
import ShortcutSyncDomain

/// A push's append and the write of its fold in one statement, committed on its own (no
/// transaction around it): the optimistic push of `PostgresEventStore` (DESIGN §6).
///
/// The fold was computed beforehand from rows as they were at the head `expectedVersion` with the
/// mark `expectedMark` (`AccountHead.mark`): read in the same snapshot as the head, or kept by
/// this process from its own last write of the account (`FoldReadCache`). The batch continues the
/// pushing device's last seq as it was then (the caller checked it). The statement moves the head
/// only when it is still that write of the head row, at that version and current (its folded
/// version equal to it): then nothing wrote the account's rows since (every write of them writes
/// the head in its transaction, also a maintenance fold, a refold or a rebuild's promotion, which
/// leave its versions as they were), so the device's last seq is still the one known and the
/// fold is exact. That one `UPDATE` is the check and the lock: a push of the same account that
/// comes at the same moment waits for it, then finds the head moved and writes nothing. The batch
/// and the fold's rows are written only when the head moved (`moved`, `go`). Otherwise it writes
/// nothing and answers no count; the push then reads the rows, or goes the locking way.
///
/// The head is updated in place (a HOT update, migration 0014): no index reads the versions.
///
/// On Citus the same write goes as one call of a distributed function (`PushWriteFunction`,
/// `PushWriteRoute`): Citus runs this one arm by arm through the coordinator.
///
/// Its fold arms are `Arms`' (`FoldArm`, the same text as the maintenance write's), with their
/// parameters `$1`…`$50` whether an arm is there or not; the append's follow (`$51`…`$60`), and
/// the push's history value (`$61`, migration 0027: a random value the head and every event of
/// the batch take, which a pull's cursor names).
/// Their types are declared (`bindingDataTypes`), so that a statement without some arms still
/// knows the types of the values it does not read.
struct AppendFoldedStatement<Arms: FoldArmSet>: PostgresPreparedStatement {
    static var sql: String { Arms.appendFoldedSQL }
    static var name: String { Arms.appendFoldedName }

    /// The statement's text, assembled from its arms (each set keeps it: `FoldArmSet.appendFoldedSQL`).
    static var text: String {
        FoldSQL.statement([("moved", moved), ("inserted", inserted), ("go", "SELECT 1 FROM moved")] + FoldSQL.arms(Arms.arms),
                          then: "SELECT count(*), (SELECT mark FROM moved) FROM inserted")
    }

    private static var moved: String {
        """
        UPDATE account_heads h SET version = $59, folded_version = $59, history = $61
        WHERE h.account_id = $1 AND h.version = $52 AND h.folded_version = $52 AND \(AccountHead.markSQL) = $60
        RETURNING \(AccountHead.markSQL) AS mark
        """
    }

    private static var inserted: String {
        """
        INSERT INTO events (account_id, version, device_id, seq, event_id, type, hlc_wall, hlc_counter, body, history)
        SELECT $1, $52 + b.ord, $51, b.seq, b.event_id, b.type, b.wall, b.counter, b.body::jsonb, $61
        FROM moved, unnest($53::uuid[], $54::int8[], $55::text[], $56::int8[], $57::int8[], $58::text[])
             WITH ORDINALITY AS b(event_id, seq, type, wall, counter, body, ord)
        RETURNING 1
        """
    }

    /// `$1`…`$61`, as `makeBindings` appends them.
    static var bindingDataTypes: [PostgresDataType] {
        [.uuid, .int8, .int8, .int8]                                          // $1 the account, $2…$4 its row
            + [.textArray, .textArray, .textArray]                            // $5…$7 groups gone
            + [.textArray, .textArray, .textArray, .int8Array, .byteaArray, .int8Array, .byteaArray]  // $8…$14 groups kept
            + [.textArray, .textArray, .textArray, .byteaArray]               // $15…$18 deletion marks
            + [.textArray, .textArray, .int8Array, .int8Array]                // $19…$22 shortcuts
            + [.uuidArray, .textArray, .int8Array, .boolArray, .byteaArray, .textArray, .textArray, .textArray,
               .byteaArray, .textArray, .textArray, .uuidArray, .boolArray]   // $23…$35 voice shortcuts
            + [.uuidArray, .textArray, .byteaArray, .int8Array]               // $36…$39 devices
            + [.textArray, .int8Array, .int8Array, .byteaArray]               // $40…$42 shortcuts' events, $43 groups' sums
            + [.byteaArray, .byteaArray]                                      // $44, $45 shortcuts' latest keys and sums
            + [.textArray, .textArray, .byteaArray]                           // $46…$48 shortcuts' sums alone
            + [.int8]                                                         // $49 the account's shortcut count
            + [.byteaArray]                                                   // $50 groups' compacted parts
            + [.uuid, .int8, .uuidArray, .int8Array, .textArray, .int8Array, .int8Array, .textArray, .int8]  // $51…$59 the append
            + [.text]                                                         // $60 the head's mark
            + [.int8]                                                         // $61 the push's history value
    }

    var account: UUID
    var device: UUID
    /// Not empty.
    var batch: ArraySlice<Event>
    var expectedVersion: Int64
    /// The head row's mark the fold's rows are of (`AccountHead.mark`).
    var expectedMark: String
    var result: AccountBatchResult
    /// The push's history value (`PostgresEventStore.newHistory`).
    var history: Int64

    func makeBindings() throws -> PostgresBindings {
        let bodies = batch.map(\.body.fieldsJSON)
        var bindings = PostgresBindings(capacity: 61)
        bindings.append(account)
        try FoldWriteStatement<LiveProjectionTables>.appendValues(
            of: result, unstored: UnstoredEvents(afterVersion: expectedVersion, events: batch, bodies: bodies), to: &bindings)
        bindings.append(device)
        bindings.append(expectedVersion)
        bindings.appendColumns(of: batch, bodies: bodies)
        bindings.append(expectedVersion + Int64(batch.count))
        bindings.append(expectedMark)
        bindings.append(history)
        return bindings
    }

    /// How many events it appended and the head's new mark; nil when its check failed.
    func decodeRow(_ row: PostgresRow) throws -> (appended: Int, mark: String)? {
        let (count, mark) = try row.decode((Int64, String?).self)
        guard count > 0, let mark else { return nil }
        return (Int(count), mark)
    }
}

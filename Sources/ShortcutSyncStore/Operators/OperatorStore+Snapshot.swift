import Foundation
import NIOCore
import PostgresNIO
import ShortcutSyncDomain

extension OperatorStore {
    /// The account's history as an export writes it (`ArchivedHistory`), read in one snapshot of
    /// the database: a compaction that commits meanwhile cannot leave the file with the horizon
    /// of one moment and the events of another.
    public func archivedHistory(account: UUID) async throws -> ArchivedHistory {
        try await client.withConnection { connection in
            try await connection.inTransaction(.readOnlySnapshot, logger: logger) { connection in
                let horizon = try await horizon(of: account, on: connection)
                var rows: [(table: String, json: String)] = []
                if horizon != nil {
                    for table in ProjectionTables.names {
                        // Ordered by the text itself, byte by byte: the same snapshot gives the same lines.
                        let texts = try await connection.guardedQuery("""
                            SELECT row_to_json(s)::text FROM snapshot.\(unescaped: table) s WHERE s.account_id = \(account)
                            ORDER BY row_to_json(s)::text COLLATE "C"
                            """, logger: logger).decode(String.self).collectAll()
                        rows += texts.map { (table, $0) }
                    }
                }
                let events = try await EventCoding.decode(try await connection.guardedQuery("""
                    SELECT \(unescaped: EventCoding.columns) FROM events WHERE account_id = \(account) ORDER BY version
                    """, logger: logger))
                var history = ArchivedHistory(events: events, horizon: horizon, snapshotRows: rows)
                let fingerprints = try await connection.guardedQuery("""
                    SELECT device_id, first_seq, fingerprints FROM retry_fingerprints WHERE account_id = \(account) ORDER BY device_id, first_seq
                    """, logger: logger)
                for try await (device, first, bytes) in fingerprints.decode((UUID, Int64, ByteBuffer).self) {
                    history.retryFingerprints.append(RetryFingerprints(deviceId: device, firstSeq: first, fingerprints: Array(bytes.readableBytesView)))
                }
                return history
            }
        }
    }

    /// Stores the file's snapshot of `account` (its rows in `snapshot.*`, every row checked to
    /// have this database's columns), checks that its account row holds the file's horizon, and
    /// copies its rows to the live tables: the account's rows at its horizon, where the
    /// maintenance tasks fold the events after it. Returns how many rows it stored. Throws
    /// `ImportConflict` naming the line of a row that does not fit.
    func insertSnapshot(_ snapshot: ArchivedSnapshot, account: UUID, on connection: PostgresConnection) async throws -> Int {
        let columns = try await snapshotColumns(on: connection)
        for row in snapshot.rows {
            let expected = columns[row.table] ?? []
            guard row.columns == expected else {
                let missing = expected.subtracting(row.columns).sorted(), extra = row.columns.subtracting(expected).sorted()
                throw ImportConflict(line: row.line, reason: "the snapshot row of \(row.table) does not have this database's columns ("
                    + [missing.isEmpty ? nil : "missing \(missing.joined(separator: ", "))",
                       extra.isEmpty ? nil : "unknown \(extra.joined(separator: ", "))"].compactMap { $0 }.joined(separator: "; ")
                    + "): export the account again from a database of this version")
            }
        }
        // The file's lines as PostgreSQL reads them, which is how they are inserted: a line whose
        // object, or whose row, names a key twice (JSON's readers differ in which one counts), or
        // whose row is of another account as read here, is refused before anything is stored.
        let refused = try await connection.guardedQuery("""
            SELECT l.n, CASE WHEN c.line_twice THEN 'twice' WHEN c.row_twice THEN 'row twice' ELSE 'account' END
            FROM unnest(\(snapshot.rows.map(\.text))::text[], \(snapshot.rows.map { Int64($0.line) })::bigint[]) AS l(line, n),
                 LATERAL (SELECT (SELECT count(*) <> count(DISTINCT k) FROM json_object_keys(l.line::json) k) AS line_twice,
                                 CASE WHEN json_typeof(l.line::json -> 'row') = 'object'
                                      THEN (SELECT count(*) <> count(DISTINCT k) FROM json_object_keys(l.line::json -> 'row') k)
                                      ELSE true END AS row_twice) c
            WHERE c.line_twice OR c.row_twice
               OR lower(l.line::jsonb -> 'row' ->> 'account_id') IS DISTINCT FROM \(account.uuidString.lowercased())
            ORDER BY l.n LIMIT 1
            """, logger: logger).decode((Int64, String).self).collectAll()
        if let (line, why) = refused.first {
            let reason = switch why {
            case "twice": "the snapshot line names a member twice"
            case "row twice": "the snapshot row names a column twice"
            default: "the snapshot row's account_id is not the account's, \(account.uuidString.lowercased())"
            }
            throw ImportConflict(line: Int(line), reason: reason)
        }
        for table in ProjectionTables.names {
            let rows = snapshot.rows.filter { $0.table == table }
            guard !rows.isEmpty else { continue }
            try await connection.inSavepoint("snapshot_rows", logger: logger) { connection in
                try await insertSnapshotRows(rows, into: table, account: account, on: connection)
            } recover: { error in
                // One of them does not fit (a value its column cannot read, a key twice): which one.
                for row in rows {
                    try await connection.inSavepoint("snapshot_row", logger: logger) { connection in
                        try await insertSnapshotRows([row], into: table, account: account, on: connection)
                    } recover: { error in
                        throw ImportConflict(line: row.line, reason: "the snapshot row does not fit table \(table): \(Self.databaseWords(error))")
                    }
                }
                throw ImportConflict(line: rows[0].line, reason: "the snapshot rows of \(table) do not fit it: \(Self.databaseWords(error))")
            }
        }
        let rows = try await connection.guardedQuery("""
            SELECT horizon FROM snapshot.projection_accounts WHERE account_id = \(account)
            """, logger: logger).decode(ByteBuffer?.self).collectAll()
        guard rows.count == 1, let stored = rows[0], (try? CompactionColumns.horizon(stored: stored)) == snapshot.horizon else {
            throw ImportConflict(line: snapshot.line, reason: "the snapshot's projection_accounts row does not hold the horizon of this line")
        }
        try await requireFoldable(snapshot, account: account, on: connection)
        for table in ProjectionTables.names {
            // The live rows start as the snapshot's (the tables have the same columns in the same order).
            try await connection.guardedQuery("""
                INSERT INTO \(unescaped: table) SELECT * FROM snapshot.\(unescaped: table) WHERE account_id = \(account)
                """, logger: logger)
        }
        return snapshot.rows.count
    }

    /// Checks the stored snapshot of `account` by the rules the fold's rows hold to (issue 65,
    /// item 6), in the import's transaction, so that a value no fold writes is refused before
    /// anything is stored rather than trapping a later fold: each group's donations and latest
    /// version from 1 to the horizon's version (every donation it counts is an event up to the
    /// horizon), the account row at the horizon's version with at most
    /// `Limits.maxShortcutsPerAccount` shortcuts and a clock an event can have; then the account
    /// row and every group read as a push reads them (`StoredCount`, `EventKey.isWithinLimits`,
    /// the sums' and rules' bytes). Throws `ImportConflict` naming the first line beyond them.
    private func requireFoldable(_ snapshot: ArchivedSnapshot, account: UUID, on connection: PostgresConnection) async throws {
        let horizon = snapshot.horizon.version
        // Every line's row was inserted by now (`insertSnapshotRows`), so each reads as its
        // table's record, with its columns' types.
        let beyond = try await connection.guardedQuery("""
            SELECT l.n FROM unnest(\(snapshot.rows.map(\.text))::text[], \(snapshot.rows.map(\.table))::text[],
                                   \(snapshot.rows.map { Int64($0.line) })::bigint[]) AS l(line, t, n)
            WHERE (l.t = 'projection_donation_groups' AND NOT EXISTS (
                       SELECT 1 FROM jsonb_populate_record(NULL::snapshot.projection_donation_groups, l.line::jsonb -> 'row') g
                       WHERE g.donations BETWEEN 1 AND \(horizon) AND g.latest_version BETWEEN 1 AND \(horizon)))
               OR (l.t = 'projection_accounts' AND NOT EXISTS (
                       SELECT 1 FROM jsonb_populate_record(NULL::snapshot.projection_accounts, l.line::jsonb -> 'row') a
                       WHERE a.version = \(horizon) AND a.shortcut_count BETWEEN 0 AND \(Int64(Limits.maxShortcutsPerAccount))
                         AND a.max_hlc_wall BETWEEN 0 AND \(Limits.hlcWallRange.upperBound)
                         AND a.max_hlc_counter BETWEEN 0 AND \(Int64(Limits.hlcCounterRange.upperBound))))
            ORDER BY l.n LIMIT 1
            """, logger: logger).decode(Int64.self).collectAll()
        if let line = beyond.first {
            throw ImportConflict(line: Int(line), reason: "the snapshot row holds a count, version or clock beyond what a fold of this horizon writes")
        }
        do {
            var needs = FoldNeeds()
            needs.everyGroup = true
            _ = try await ProjectionRowStore(tables: .snapshot, logger: logger).read(account: account, needs: needs, on: connection)
        } catch let error as StoreError {
            throw ImportConflict(line: snapshot.line, reason: "the snapshot cannot be folded on: \(error)")
        }
    }

    /// Whether the database's snapshot of `account` holds exactly the file's rows (compared as
    /// JSON values, so that only what they hold counts, not how the file spells it).
    func holdsSnapshot(_ snapshot: ArchivedSnapshot, account: UUID, on connection: PostgresConnection) async throws -> Bool {
        for table in ProjectionTables.names {
            let texts = snapshot.rows.filter { $0.table == table }.map(\.text)
            let rows = try await connection.guardedQuery("""
                SELECT count(*) FROM (
                    (SELECT to_jsonb(s) FROM snapshot.\(unescaped: table) s WHERE s.account_id = \(account)
                     EXCEPT ALL SELECT l.line::jsonb -> 'row' FROM unnest(\(texts)::text[]) AS l(line))
                    UNION ALL
                    (SELECT l.line::jsonb -> 'row' FROM unnest(\(texts)::text[]) AS l(line)
                     EXCEPT ALL SELECT to_jsonb(s) FROM snapshot.\(unescaped: table) s WHERE s.account_id = \(account))
                ) differing
                """, logger: logger)
            guard try await rows.decode(Int64.self).collectAll().first == 0 else { return false }
        }
        return true
    }

    /// `rows` (of one table) into `snapshot.<table>`, each the `row` member of its line, those of
    /// `account` only: every row was checked to be of it (`insertSnapshot`), and the insert holds
    /// to it too. (One statement, no data-modifying CTE to count them: Citus plans such a CTE in
    /// subplans through the coordinator.)
    private func insertSnapshotRows(_ rows: [ArchivedSnapshot.Row], into table: String, account: UUID, on connection: PostgresConnection) async throws {
        try await connection.guardedQuery("""
            INSERT INTO snapshot.\(unescaped: table)
            SELECT r.* FROM unnest(\(rows.map(\.text))::text[]) AS l(line),
                 jsonb_populate_record(NULL::snapshot.\(unescaped: table), l.line::jsonb -> 'row') AS r
            WHERE r.account_id = \(account)
            """, logger: logger)
    }

    /// The columns of each snapshot table in this database.
    private func snapshotColumns(on connection: PostgresConnection) async throws -> [String: Set<String>] {
        let rows = try await connection.guardedQuery("""
            SELECT table_name::text, column_name::text FROM information_schema.columns
            WHERE table_schema = 'snapshot' AND table_name = ANY(\(ProjectionTables.names))
            """, logger: logger)
        var columns: [String: Set<String>] = [:]
        for try await (table, column) in rows.decode((String, String).self) { columns[table, default: []].insert(column) }
        return columns
    }

    /// What the database said of an error, in its own words (its first line), never the driver's.
    private static func databaseWords(_ error: any Error) -> String {
        if case .answered(let message)? = DatabaseFailure(error) { return message }
        return DatabaseFailure.reason(error)
    }
}

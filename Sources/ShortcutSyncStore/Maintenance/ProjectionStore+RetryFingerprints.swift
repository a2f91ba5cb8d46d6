import Foundation
import Logging
import NIOCore
import PostgresNIO
import ShortcutSyncDomain

extension ProjectionStore {
    /// Before a compaction removes `account`'s events past `after` up to `last`: the fingerprint
    /// of each one's id (`RetryFingerprints`, migration 0029), added to its device's rows, so that
    /// the device's retry of it is still told from a reuse. A sign-out (the greatest seq) has none:
    /// nothing of its device follows it.
    func keepRetryFingerprints(account: UUID, after: Int64, through last: Int64, on connection: PostgresConnection) async throws {
        let rows = try await connection.guardedQuery("""
            SELECT device_id, seq, substring(sha256(uuid_send(event_id)) FROM 1 FOR 2) FROM events
            WHERE account_id = \(account) AND version > \(after) AND version <= \(last) AND seq < \(Limits.seqRange.upperBound)
            ORDER BY device_id, seq
            """, logger: logger)
        try await addRetryFingerprints(rows, account: account, on: connection)
    }

    /// The same for the events at or below `horizon` (the last one) that the log still holds and
    /// no row has a fingerprint of: those a compaction older than migration 0029 kept (each
    /// device's last push, then), which the next one removes.
    func keepRetryFingerprints(account: UUID, keptBelow horizon: Int64, on connection: PostgresConnection) async throws {
        guard horizon > 0 else { return }
        let rows = try await connection.guardedQuery("""
            SELECT e.device_id, e.seq, substring(sha256(uuid_send(e.event_id)) FROM 1 FOR 2) FROM events e
            WHERE e.account_id = \(account) AND e.version <= \(horizon) AND e.seq < \(Limits.seqRange.upperBound)
              AND NOT EXISTS (SELECT 1 FROM retry_fingerprints f
                              WHERE f.account_id = \(account) AND f.device_id = e.device_id
                                AND f.first_seq <= e.seq AND e.seq < f.first_seq + length(f.fingerprints) / 2)
            ORDER BY e.device_id, e.seq
            """, logger: logger)
        try await addRetryFingerprints(rows, account: account, on: connection)
    }

    /// `rows` (device, seq, fingerprint; by device and seq, none held yet) added to their devices' rows.
    private func addRetryFingerprints(_ rows: PostgresRowSequence, account: UUID, on connection: PostgresConnection) async throws {
        // Each device's runs of consecutive seqs, in order.
        var runs: [(device: UUID, first: Int64, bytes: [UInt8])] = []
        for try await (device, seq, fingerprint) in rows.decode((UUID, Int64, ByteBuffer).self) {
            if let last = runs.last, last.device == device, last.first + Int64(last.bytes.count / 2) == seq {
                runs[runs.count - 1].bytes += fingerprint.readableBytesView
            } else {
                runs.append((device, seq, Array(fingerprint.readableBytesView)))
            }
        }
        guard !runs.isEmpty else { return }

        // Each device's last row, which a run that follows it on is added to while it has room.
        var lastRows: [UUID: (first: Int64, count: Int64)] = [:]
        let stored = try await connection.guardedQuery("""
            SELECT DISTINCT ON (device_id) device_id, first_seq, length(fingerprints) / 2 FROM retry_fingerprints
            WHERE account_id = \(account) ORDER BY device_id, first_seq DESC
            """, logger: logger)
        for try await (device, first, count) in stored.decode((UUID, Int64, Int32).self) { lastRows[device] = (first, Int64(count)) }

        var extended: [RetryFingerprints] = [], added: [RetryFingerprints] = []
        for run in runs {
            var first = run.first
            var bytes = run.bytes[...]
            if let last = lastRows[run.device], last.first + last.count == first, last.count < Int64(RetryFingerprints.maximumSeqs) {
                let taken = min(bytes.count / 2, RetryFingerprints.maximumSeqs - Int(last.count))
                extended.append(RetryFingerprints(deviceId: run.device, firstSeq: last.first, fingerprints: Array(bytes.prefix(taken * 2))))
                bytes = bytes.dropFirst(taken * 2)
                first += Int64(taken)
            }
            while !bytes.isEmpty {
                let taken = min(bytes.count / 2, RetryFingerprints.maximumSeqs)
                added.append(RetryFingerprints(deviceId: run.device, firstSeq: first, fingerprints: Array(bytes.prefix(taken * 2))))
                bytes = bytes.dropFirst(taken * 2)
                first += Int64(taken)
            }
        }
        if !extended.isEmpty {
            try await connection.guardedQuery("""
                UPDATE retry_fingerprints r SET fingerprints = r.fingerprints || u.more
                FROM unnest(\(extended.map(\.deviceId))::uuid[], \(extended.map(\.firstSeq))::int8[],
                            \(extended.map { ByteBuffer(bytes: $0.fingerprints) })::bytea[]) AS u(device_id, first_seq, more)
                WHERE r.account_id = \(account) AND r.device_id = u.device_id AND r.first_seq = u.first_seq
                """, logger: logger)
        }
        try await RetryFingerprints.insert(added, account: account, on: connection, logger: logger)
    }

}

extension RetryFingerprints {
    /// Adds `rows` to `account`'s fingerprints; a row already stored (the same device and first seq) is left as it is.
    static func insert(_ rows: [RetryFingerprints], account: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        guard !rows.isEmpty else { return }
        try await connection.guardedQuery("""
            INSERT INTO retry_fingerprints (account_id, device_id, first_seq, fingerprints)
            SELECT \(account), u.device_id, u.first_seq, u.fingerprints
            FROM unnest(\(rows.map(\.deviceId))::uuid[], \(rows.map(\.firstSeq))::int8[],
                        \(rows.map { ByteBuffer(bytes: $0.fingerprints) })::bytea[]) AS u(device_id, first_seq, fingerprints)
            ON CONFLICT (account_id, device_id, first_seq) DO NOTHING
            """, logger: logger)
    }
}

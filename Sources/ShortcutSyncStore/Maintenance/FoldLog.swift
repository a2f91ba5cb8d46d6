import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

extension PostgresEventStore {
    /// The events of one account with versions in `versions`, in version order, read on `connection`.
    public func readFoldLog(ofAccount account: UUID, versions: ClosedRange<Int64>, on connection: PostgresConnection) async throws -> [FoldLogEntry] {
        let rows = try await connection.guardedQuery("""
            SELECT \(unescaped: FoldLogCoding.columns) FROM events
            WHERE account_id = \(account) AND version BETWEEN \(versions.lowerBound) AND \(versions.upperBound)
            ORDER BY version
            """, logger: logger)
        return try await FoldLogCoding().entries(rows)
    }

    /// Every event of the accounts in `accounts` (by uuid order), account after account (each in
    /// version order), read as a stream on `connection`, in one snapshot: for a rebuild, which
    /// folds one account at a time. A push commits its events with its head, so in the snapshot
    /// each account's events are whole, versions 1 to its head. The events of an account in
    /// `after` at or below its version there (a compacted account's anchors, below its horizon)
    /// are left out, read no further than their first two columns.
    public func foldLogByAccount(
        accounts: AccountRange = .all, after horizons: [UUID: Int64] = [:], on connection: PostgresConnection
    ) async throws -> FoldLogSequence {
        // Cross-account: a rebuild reads the whole log, range by range.
        let rows = try await connection.guardedQuery("""
            SELECT \(unescaped: FoldLogCoding.columns) FROM events
            WHERE account_id >= \(accounts.lowest) AND (\(accounts.end)::uuid IS NULL OR account_id < \(accounts.end))
            ORDER BY account_id, version
            """, logger: logger)
        return FoldLogSequence(rows: rows, horizons: horizons)
    }
}

/// The events of `foldLogByAccount`, decoded as they are read. A sequence of its own rather
/// than the rows' `compactMap`: the standard library's async `compactMap` is not specialised
/// for these types outside its own module, and looked up their generic metadata at every event
/// (some 3 % of a rebuild's samples, perf, 300 accounts × 1,000 events interleaved).
public struct FoldLogSequence: AsyncSequence, Sendable {
    public typealias Element = FoldLogEntry
    let rows: PostgresRowSequence
    let horizons: [UUID: Int64]

    public struct AsyncIterator: AsyncIteratorProtocol {
        var rows: PostgresRowSequence.AsyncIterator
        let horizons: [UUID: Int64]
        let coding = FoldLogCoding()

        public mutating func next() async throws -> FoldLogEntry? {
            while let row = try await rows.next() {
                if let entry = try coding.entry(row, after: horizons) { return entry }
            }
            return nil
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(rows: rows.makeAsyncIterator(), horizons: horizons)
    }
}

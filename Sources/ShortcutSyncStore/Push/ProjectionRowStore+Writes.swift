import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

extension ProjectionRowStore {
    /// Writes back what one account's batch changed, in one statement (`FoldWriteStatement`)
    /// that names the account in every reference to a table (its rows' other keys come as
    /// unnest arrays); `distributed`, the live tables' by one call of `fold_write` (`FoldWriteFunction`).
    public func write(account: UUID, _ result: AccountBatchResult, on connection: PostgresConnection) async throws {
        switch tables {
        case .live where distributed:
            try await FoldWriteStatement<LiveProjectionTables>.runAsDistributedFunction(account: account, result, on: connection, logger: logger)
        case .live: _ = try await connection.guardedExecute(try FoldWriteStatement<LiveProjectionTables>(account: account, result), logger: logger)
        case .rebuild: _ = try await connection.guardedExecute(try FoldWriteStatement<RebuildProjectionTables>(account: account, result), logger: logger)
        case .snapshot: _ = try await connection.guardedExecute(try FoldWriteStatement<SnapshotProjectionTables>(account: account, result), logger: logger)
        }
        if let learning = result.learning {
            // Rare (a batch with a learning event or a sign-out): a statement of its own.
            try await connection.guardedQuery("""
                UPDATE \(unescaped: tables.prefix)projection_accounts
                SET learning = \(learning.bytes.map { ByteBuffer(bytes: $0) }), forgets_shortcuts = \(learning.forgetsShortcuts)
                WHERE account_id = \(account)
                """, logger: logger).drain()
        }
    }
}

extension FoldSQL {
    /// `FoldWriteStatement`'s text for the live tables: every arm, each writing whatever its
    /// arrays hold (`go` always has its row).
    static let write = statement([("go", "SELECT 1")] + arms(FoldArm.allCases), then: "SELECT 1")
}

extension ProjectionRowStore {
    /// A text[] literal (`{"a","b"}`), cast per row: unnest cannot take an array of arrays.
    static func arrayLiteral(_ values: [String]) -> String {
        let quoted = values.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
        return "{" + quoted.joined(separator: ",") + "}"
    }
}

extension UUID {
    /// All zero bits: stands for NULL in a uuid column array.
    static let zero = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// Byte-wise order, for writing rows in a stable order (fewer lock waits between writers).
    func isOrderedBefore(_ other: UUID) -> Bool {
        withUnsafeBytes(of: uuid) { lhs in withUnsafeBytes(of: other.uuid) { rhs in lhs.lexicographicallyPrecedes(rhs) } }
    }
}

extension PostgresBindings {
    /// A batch's events as the six column arrays the append statements unnest: ids, seqs, types,
    /// wall clocks, counters and stored bodies.
    mutating func appendColumns(of batch: ArraySlice<Event>, bodies: [String]) {
        append(batch.map(\.id))
        append(batch.map(\.seq))
        append(batch.map(\.type.rawValue))
        append(batch.map(\.hlc.wallMillis))
        append(batch.map { Int64($0.hlc.counter) })
        append(bodies)
    }
}

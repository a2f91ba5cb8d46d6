import Foundation
import PostgresNIO

/// The push's check and move of its account's head, alone: the first statement of the routed
/// write (`AppendFoldedStatement.runAsRouterStatements`), where the one statement has it as its
/// `moved` arm. It moves the head only when it is still the write of the head row the fold's rows
/// are of (its version, current, its mark), and answers the row's new mark; no row otherwise.
struct HeadMoveStatement: PostgresPreparedStatement {
    static let name = "HeadMove"
    static let sql = """
        UPDATE account_heads h SET version = $3, folded_version = $3
        WHERE h.account_id = $1 AND h.version = $2 AND h.folded_version = $2 AND \(AccountHead.markSQL) = $4
        RETURNING \(AccountHead.markSQL)
        """

    var account: UUID
    var expectedVersion: Int64
    var newVersion: Int64
    /// `AccountHead.mark`.
    var expectedMark: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(account)
        bindings.append(expectedVersion)
        bindings.append(newVersion)
        bindings.append(expectedMark)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> String {
        try row.decode(String.self)
    }
}

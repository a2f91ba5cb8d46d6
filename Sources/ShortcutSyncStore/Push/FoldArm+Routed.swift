import Foundation

extension FoldArm {
    /// Each arm's text as a statement of its own on Citus (in `PushWriteFunction`'s body), made
    /// once: `go` is the account's head row, read by `account_id = $1`, and an INSERT takes the
    /// account it writes from that row. Citus pushes an `INSERT … SELECT` down to the shard whole only when the distribution column it inserts comes from a
    /// table of the same colocation group; with the account as a parameter (`SELECT $1, …`, as
    /// the arms are written) it runs the SELECT apart and copies its rows over
    /// (three commands, measured). The values are the same: the row's `account_id` is `$1`.
    /// Bound with the same `$1`…`$50` as `sql`.
    static let routedSQL: [FoldArm: String] = Dictionary(uniqueKeysWithValues: allCases.map { arm in
        let head = "(SELECT account_id FROM account_heads WHERE account_id = $1) go"
        var sql = arm.sql.replacingOccurrences(of: "FROM go", with: "FROM " + head)
            .replacingOccurrences(of: "USING go", with: "USING " + head)
        // An INSERT's select list starts with the account; no other arm has `$1, `.
        if let account = sql.range(of: "$1, ") { sql.replaceSubrange(account, with: "go.account_id, ") }
        return (arm, sql)
    })
}

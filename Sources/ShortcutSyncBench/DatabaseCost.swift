import Foundation
import Logging
import ShortcutSyncStore

/// What PostgreSQL spent on one part of a benchmark, measured from outside the service: its
/// statements' execution and planning time in the benchmark's database (`pg_stat_statements`,
/// when the server loads it) and the CPU time of the server's processes (when it runs on this
/// machine: its postmaster, every backend and helper, and the backends that ended meanwhile).
public struct DatabaseCost: Sendable, Hashable, Codable {
    /// Statement time, in milliseconds; nil without `pg_stat_statements`.
    public var executionMilliseconds: Double?
    public var planningMilliseconds: Double?
    /// The server's CPU time (user and system), in milliseconds; nil when it is not on this machine.
    public var cpuMilliseconds: Double?
    /// The statements that took the most time, most first.
    public var statements: [Statement]

    public struct Statement: Sendable, Hashable, Codable {
        /// The statement's text, its spaces collapsed, cut after 70 characters.
        public var text: String
        public var calls: Int
        public var executionMilliseconds: Double
        /// How many of the calls were planned (a prepared statement planned once per session
        /// counts once per session).
        public var plans: Int
        public var planningMilliseconds: Double
        public var rows: Int
        /// Shared buffers hit or read.
        public var buffers: Int
        public var walBytes: Int
    }

    /// A table of `statements` with each one's figures per call.
    public var statementTable: String {
        var lines = ["| statement | calls | exec ms/call | plans | plan ms/plan | rows/call | buffers/call | WAL bytes/call |",
                     "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for statement in statements {
            let calls = Double(max(statement.calls, 1))
            lines.append("| `\(statement.text)` | \(statement.calls) | " + String(format: "%.3f", statement.executionMilliseconds / calls)
                + " | \(statement.plans) | " + String(format: "%.3f", statement.planningMilliseconds / Double(max(statement.plans, 1)))
                + " | " + String(format: "%.1f", Double(statement.rows) / calls) + " | " + String(format: "%.1f", Double(statement.buffers) / calls)
                + " | " + String(format: "%.0f", Double(statement.walBytes) / calls) + " |")
        }
        return lines.joined(separator: "\n")
    }
}

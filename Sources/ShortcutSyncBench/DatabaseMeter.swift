import Foundation
import Logging
import PostgresNIO
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

/// Measures `DatabaseCost` around a part of a benchmark, over a connection of its own.
struct DatabaseMeter {
    let client: PostgresClient
    let logger: Logger
    /// Whether the server loads `pg_stat_statements` (the extension is then made in the database).
    let statementsKept: Bool
    /// The server's postmaster, when it runs on this machine.
    let postmaster: Int32?

    /// Runs `body` with a meter on `database`.
    static func with<Result: Sendable>(
        _ database: DatabaseURL, logger: Logger, _ body: (DatabaseMeter) async throws -> Result
    ) async throws -> Result {
        let client = PostgresClient(configuration: try database.clientConfiguration(maximumConnections: 1), backgroundLogger: logger)
        return try await client.withRunning {
            // Made only where the server loads it: made where it does not (its files installed, the
            // server not told to load it), the extension's view fails every query that reads it,
            // and a Citus coordinator then fails statements of its own that look at it.
            let preloaded = try await client.query("SELECT current_setting('shared_preload_libraries')", logger: logger)
                .decode(String.self).collectAll().first?.contains("pg_stat_statements") ?? false
            let kept: Bool
            do {
                guard preloaded else { throw NotLoaded() }
                try await client.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", logger: logger)
                try await client.query("SELECT pg_stat_statements_reset()", logger: logger)
                kept = true
            } catch {
                kept = false  // not installed, or not in shared_preload_libraries
            }
            let backend = try await client.query("SELECT pg_backend_pid()", logger: logger).decode(Int32.self).collectAll().first
            let postmaster = backend.flatMap(ProcessCPU.parent).flatMap { parent in ProcessCPU.command(parent) == "postgres" ? parent : nil }
            return try await body(DatabaseMeter(client: client, logger: logger, statementsKept: kept, postmaster: postmaster))
        }
    }

    /// Where a part starts: the statistics cleared, the server's CPU time so far.
    func start() async throws -> Double? {
        if statementsKept { try await client.query("SELECT pg_stat_statements_reset()", logger: logger) }
        return postmaster.flatMap(ProcessCPU.ofServer)
    }

    /// What the server spent since `start()` returned `cpuBefore`.
    func finish(cpuBefore: Double?, topStatements: Int = 8) async throws -> DatabaseCost {
        let cpuAfter = postmaster.flatMap(ProcessCPU.ofServer)
        var cost = DatabaseCost(cpuMilliseconds: cpuBefore.flatMap { before in cpuAfter.map { ($0 - before) * 1000 } }, statements: [])
        guard statementsKept else { return cost }
        // Every statement of this database but the meter's own.
        let rows = try await client.query("""
            SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 70), calls, total_exec_time, plans, total_plan_time, rows,
                   shared_blks_hit + shared_blks_read, wal_bytes::int8
            FROM pg_stat_statements
            WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%'
                  AND query NOT LIKE 'SELECT pg_backend_pid()%'
            ORDER BY total_exec_time + total_plan_time DESC
            """, logger: logger)
        var execution = 0.0, planning = 0.0
        for try await (text, calls, exec, plans, plan, returned, buffers, wal) in rows.decode(
            (String, Int64, Double, Int64, Double, Int64, Int64, Int64).self) {
            execution += exec
            planning += plan
            if cost.statements.count < topStatements {
                cost.statements.append(.init(text: text, calls: Int(calls), executionMilliseconds: exec, plans: Int(plans),
                                             planningMilliseconds: plan, rows: Int(returned), buffers: Int(buffers), walBytes: Int(wal)))
            }
        }
        cost.executionMilliseconds = execution
        cost.planningMilliseconds = planning
        return cost
    }
}

/// CPU time of processes on this machine, from /proc (Linux).
enum ProcessCPU {
    /// A process's parent, from /proc/<pid>/stat.
    static func parent(of pid: Int32) -> Int32? {
        fields(pid).flatMap { $0.count > 1 ? Int32($0[1]) : nil }
    }

    /// A process's command name (/proc/<pid>/comm).
    static func command(_ pid: Int32) -> String? {
        (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A PostgreSQL server's CPU time so far, in seconds: its postmaster's own and that of its
    /// children that ended (which the postmaster waited for), and every child still running.
    static func ofServer(_ postmaster: Int32) -> Double? {
        guard let own = fields(postmaster), own.count > 14,
              let user = Double(own[11]), let system = Double(own[12]),
              let childrenUser = Double(own[13]), let childrenSystem = Double(own[14]) else { return nil }
        var ticks = user + system + childrenUser + childrenSystem
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in processes {
            guard let pid = Int32(entry), pid != postmaster, let child = fields(pid), child.count > 12,
                  Int32(child[1]) == postmaster, let childUser = Double(child[11]), let childSystem = Double(child[12]) else { continue }
            ticks += childUser + childSystem
        }
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The fields of /proc/<pid>/stat after the command's closing parenthesis: [0] is the state
    /// (field 3), [1] the parent (4), [11] utime (14), [12] stime (15), [13] cutime, [14] cstime.
    static func fields(_ pid: Int32) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ")
    }
}

/// PostgreSQL's cost per event of the pushes beside the raw inserts', in microseconds (nil where
/// unknown), with the pushes' whole measurement.
public struct DatabaseCostPerEvent: Sendable, Hashable, Codable {
    public var executionMicroseconds: Double?
    public var planningMicroseconds: Double?
    public var cpuMicroseconds: Double?
    public var rawExecutionMicroseconds: Double?
    public var rawCPUMicroseconds: Double?
    public var pushes: DatabaseCost

    init(ours: DatabaseCost, events: Int, raw: DatabaseCost, rawRows: Int) {
        func per(_ milliseconds: Double?, _ count: Int) -> Double? {
            guard let milliseconds, count > 0 else { return nil }
            return milliseconds * 1000 / Double(count)
        }
        executionMicroseconds = per(ours.executionMilliseconds, events)
        planningMicroseconds = per(ours.planningMilliseconds, events)
        cpuMicroseconds = per(ours.cpuMilliseconds, events)
        rawExecutionMicroseconds = per(raw.executionMilliseconds.map { $0 + (raw.planningMilliseconds ?? 0) }, rawRows)
        rawCPUMicroseconds = per(raw.cpuMilliseconds, rawRows)
        pushes = ours
    }

    /// Statement time (execution and planning) per event, ours beside raw, and CPU per event.
    var summary: String {
        func micros(_ value: Double?) -> String { value.map { String(format: "%.0f µs", $0) } ?? "?" }
        let ours = executionMicroseconds.map { $0 + (planningMicroseconds ?? 0) }
        let ratio = ours.flatMap { ours in rawExecutionMicroseconds.flatMap { $0 > 0 ? String(format: " (%.1f×)", ours / $0) : nil } } ?? ""
        return "statements \(micros(ours)) (planning \(micros(planningMicroseconds))) vs raw \(micros(rawExecutionMicroseconds))\(ratio); "
            + "CPU \(micros(cpuMicroseconds)) vs raw \(micros(rawCPUMicroseconds))"
    }
}

extension ProcessCPU {
    /// A process's CPU time so far (user and system), in seconds.
    static func of(_ pid: Int32) -> Double? {
        guard let stat = fields(pid), stat.count > 12, let user = Double(stat[11]), let system = Double(stat[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

/// `pg_stat_statements` is not among the libraries the server loads.
private struct NotLoaded: Error {}

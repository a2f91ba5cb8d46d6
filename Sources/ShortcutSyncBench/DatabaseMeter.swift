import Foundation
import Logging
import PostgresNIO
import ShortcutSyncStore

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
                // Made only where it is not there yet: a Citus worker refuses to make an extension
                // (the coordinator's is made on every node).
                let made = try await client.query("SELECT count(*) FROM pg_extension WHERE extname = 'pg_stat_statements'", logger: logger)
                    .decode(Int64.self).collectAll().first ?? 0
                if made == 0 { try await client.query("CREATE EXTENSION pg_stat_statements", logger: logger) }
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

    /// Runs `body` with a meter on each of `databases` (none: `body([])`).
    static func with<Result: Sendable>(
        each databases: [DatabaseURL], logger: Logger, _ body: ([DatabaseMeter]) async throws -> Result
    ) async throws -> Result {
        guard let first = databases.first else { return try await body([]) }
        return try await with(first, logger: logger) { meter in
            try await with(each: Array(databases.dropFirst()), logger: logger) { rest in try await body([meter] + rest) }
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

extension ProcessCPU {
    /// A process's CPU time so far (user and system), in seconds.
    static func of(_ pid: Int32) -> Double? {
        guard let stat = fields(pid), stat.count > 12, let user = Double(stat[11]), let system = Double(stat[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The CPU time from `before` to `after` (seconds, as `of` reads them) per one of `count`
    /// things done in between, in microseconds; nil where either was unknown or nothing was done.
    static func microseconds(from before: Double?, to after: Double?, per count: Int) -> Double? {
        guard let before, let after, count > 0 else { return nil }
        return (after - before) * 1_000_000 / Double(count)
    }
}

/// `pg_stat_statements` is not among the libraries the server loads.
private struct NotLoaded: Error {}

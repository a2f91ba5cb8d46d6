import Foundation
import ShortcutSyncChildProcess
import ShortcutSyncStore

/// `bench push`'s second raw baseline: pgbench, PostgreSQL's own client, appending what
/// `RawAppend` appends (`batch`-row transactions of one device of one account a client, in
/// contiguous seqs, each row an event of its own with the bench's body read into `jsonb` row by
/// row) into the same `bench_raw_events`, from a custom script file, over prepared statements.
///
/// The PostgresNIO raw shares this process and its runtime with nothing but itself, yet pgbench
/// does the same inserts faster (1.4× for 100-row transactions, 2.7× for single-row commits when
/// issue 59 measured them): its figure is the database's own limit, the other the limit of
/// the stack the service is built on (docs/benchmarks.md, "Two raws").
struct PgbenchAppend: Sendable {
    /// The pgbench executable.
    let executable: URL

    /// What one run did: transactions committed, and pgbench's own rate of them (without its
    /// connections' setup).
    struct Run: Sendable {
        var transactions: Int
        var transactionsPerSecond: Double
    }

    /// pgbench on `PATH`, else the newest under /usr/lib/postgresql/*/bin; nil where it is not
    /// installed (Debian's postgresql-client package has it).
    static func find() -> PgbenchAppend? {
        let fm = FileManager.default
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/pgbench" }
        let root = "/usr/lib/postgresql"
        let versions = ((try? fm.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted(by: >)
        let found = (path + versions.map { "\(root)/\($0)/bin/pgbench" }).first { fm.isExecutableFile(atPath: $0) }
        return found.map { PgbenchAppend(executable: URL(fileURLWithPath: $0)) }
    }

    /// The script each client runs as one transaction: `batch` rows of its own account and device
    /// (the client's entry of `accounts` and `devices`, made for the run) from seq `next` on.
    /// pgbench keeps a client's variables from one transaction to its next, so `next` (1 at the
    /// start, `--define`) moves on by `batch` each time. The body is the variable `body`, bound as
    /// a parameter (pgbench would read its colons in the script's text as variables); the event
    /// ids are the server's.
    static func script(batch: Int, accounts: [UUID], devices: [UUID]) -> String {
        func array(_ ids: [UUID]) -> String { "'{\(ids.map(\.uuidString).joined(separator: ","))}'::uuid[]" }
        return """
            \\set first :next
            \\set next :next + \(batch)
            INSERT INTO bench_raw_events (\(RawAppend.columns)) \
            SELECT (\(array(accounts)))[:client_id + 1], :first::int8 + e.n - 1, (\(array(devices)))[:client_id + 1], :first::int8 + e.n - 1, \
            gen_random_uuid(), 'donation', 1763712000000 + :first::int8 + e.n - 1, 0, e.body::jsonb \
            FROM unnest(array_fill(:body::text, ARRAY[\(batch)])) WITH ORDINALITY AS e(body, n);

            """
    }

    /// `clients` clients run `script` back to back for `duration` (whole seconds, at least one)
    /// against `database`, whose table `bench_raw_events` exists; throws when pgbench fails or a
    /// client of it aborts. The password reaches pgbench in its environment, not its arguments.
    func run(batch: Int, clients: Int, duration: Duration, database: DatabaseURL) async throws -> Run {
        let scriptPath = NSTemporaryDirectory() + "shortcut-sync-pgbench-\(UUID().uuidString).sql"
        let script = Self.script(batch: batch, accounts: (0..<clients).map { _ in UUID() }, devices: (0..<clients).map { _ in UUID() })
        guard FileManager.default.createFile(atPath: scriptPath, contents: Data(script.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw BenchError("cannot write pgbench's script to \(scriptPath)")
        }
        defer { try? FileManager.default.removeItem(atPath: scriptPath) }
        let seconds = max(1, Int(duration.inSeconds.rounded()))
        let environment: [String: String?] = [
            "PGHOST": database.socketDirectory ?? database.host, "PGPORT": String(database.port), "PGUSER": database.username,
            "PGPASSWORD": database.password, "PGDATABASE": database.database, "PGSSLMODE": database.requireTLS ? "require" : "disable",
        ]
        let process = try await CommandProcess(
            executable: executable,
            arguments: ["--no-vacuum", "--protocol=prepared", "--client=\(clients)", "--jobs=\(clients)", "--time=\(seconds)",
                        "--file=\(scriptPath)", "--define=next=1", "--define=body=\(BenchEvents.body)"],
            environment: environment, output: .kept)
        defer { process.forceStop() }
        guard try await process.waitForExit(timeout: .seconds(seconds + 60)) else {
            throw BenchError("pgbench ran on \(seconds + 60) s after its \(seconds) s")
        }
        let output = process.output
        guard process.exitStatus == 0, let run = Self.parse(output) else {
            throw BenchError("pgbench exited with \(process.exitStatus ?? -1): "
                + (process.errorOutput + output).split(separator: "\n").suffix(5).joined(separator: "; "))
        }
        return run
    }

    /// The transactions and their rate from pgbench's report; nil without them.
    static func parse(_ report: String) -> Run? {
        var transactions: Int?, rate: Double?
        for line in report.split(separator: "\n") {
            if line.hasPrefix("number of transactions actually processed:") {
                transactions = line.split(separator: ":").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces).split(separator: "/").first ?? "") }
            } else if line.hasPrefix("tps = ") {
                rate = Double(line.dropFirst("tps = ".count).prefix { !$0.isWhitespace })
            }
        }
        guard let transactions, let rate else { return nil }
        return Run(transactions: transactions, transactionsPerSecond: rate)
    }
}

import EmbeddedPostgres
import Foundation
import Logging
import ShortcutSyncChildProcess
import ShortcutSyncStore

/// The service under measurement: `serve` of this executable as a child process on a database,
/// so that its memory and CPU are its own (its push budgets out of the way), and with `workerProcess` the sync worker as another
/// (`serve --no-worker` beside `worker`). The database URL and the admin token reach them
/// through their environment; their output goes where this process's goes.
struct BenchService {
    let serve: ServeProcess
    let worker: CommandProcess?
    let adminToken = "bench-" + UUID().uuidString

    /// `budgeted`: with the push budgets a person gets (`bench runaway`); else out of the way.
    /// `extraArguments`: more of `serve`'s options (`bench wake`: the APNs stand-in's).
    private init(database: DatabaseURL, workerProcess: Bool, budgeted: Bool, extraArguments: [String]) async throws {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        // The benchmarks push as fast as they can per account, far past the budget a person gets.
        let unbudgeted = budgeted ? [] : ["--push-events-per-second", "1000000000", "--push-burst", "1000000000",
                                          "--device-reads-per-second", "1000000000", "--device-read-burst", "1000000000",
                                          "--device-sign-ins-per-hour", "1000000000", "--device-sign-in-burst", "1000000000"]
        // Every simulated device and stream comes from loopback: one address, as many connections as the service takes.
        let oneAddress = ["--max-connections-per-address", "16384"]
        serve = try await ServeProcess(executable: executable, database: .url(database.urlString), port: try EmbeddedPostgres.freeLoopbackPort(),
                                       operatorPort: try EmbeddedPostgres.freeLoopbackPort(), adminToken: adminToken, logLevel: "error", arguments: (workerProcess ? ["--no-worker"] : []) + unbudgeted + oneAddress + extraArguments,
                                       output: .inherited)
        do {
            worker = workerProcess
                ? try await CommandProcess(executable: executable, arguments: ["worker", "--log-level", "error"],
                                           environment: ["DATABASE_URL": database.urlString], output: .inherited)
                : nil
        } catch {
            await serve.stop()
            throw error
        }
    }

    /// Starts the service, waits until it is ready and runs `body` with it; stops it afterwards
    /// whatever `body` did (its error, if any, is rethrown after the stop): a `defer` cannot wait
    /// for it to end, and the next benchmark's service must not share the machine with it.
    /// The arguments are `init`'s.
    static func with<Result: Sendable>(
        database: DatabaseURL, workerProcess: Bool, budgeted: Bool = false, extraArguments: [String] = [],
        _ body: (BenchService) async throws -> Result
    ) async throws -> Result {
        let service = try await BenchService(database: database, workerProcess: workerProcess, budgeted: budgeted,
                                             extraArguments: extraArguments)
        let outcome: Swift.Result<Result, any Error>
        do {
            try await service.waitUntilReady()
            outcome = .success(try await body(service))
        } catch {
            outcome = .failure(error)
        }
        await service.stop()
        return try outcome.get()
    }

    var url: URL { serve.url }
    var operators: URL { URL(string: serve.operatorURL)! }
    var servicePID: Int32 { serve.processIdentifier }
    var workerPID: Int32? { worker?.processIdentifier }

    /// Waits up to 60 s until the service answers `/readyz` with 200.
    private func waitUntilReady() async throws {
        try await waitUntilAnswering(serve.operatorURL + "/readyz", what: "the service") { [serve] in
            serve.isRunning ? nil : "status \(serve.exitStatus.map(String.init) ?? "?")"
        }
    }

    /// Stops the worker, then the service (SIGTERM), waiting for each.
    func stop() async {
        await worker?.stop()
        await serve.stop()
    }
}

/// A database of its own for one benchmark on `server`: made and migrated, handed to `body`,
/// dropped afterwards whatever `body` did (its error, if any, is rethrown after the drop).
func withFreshDatabase<Result: Sendable>(
    on server: DatabaseURL, logger: Logger, _ body: (DatabaseURL) async throws -> Result
) async throws -> Result {
    OpenFileLimit.raise()
    let url = server.with(database: "shortcut_sync_bench_\(UInt32.random(in: 0...UInt32.max))")
    try await url.createDatabaseIfMissing(logger: logger)
    let outcome: Swift.Result<Result, any Error>
    do {
        try await Migrator.migrate(url, logger: logger)
        outcome = .success(try await body(url))
    } catch {
        outcome = .failure(error)
    }
    try? await url.dropDatabase(logger: logger)
    return try outcome.get()
}

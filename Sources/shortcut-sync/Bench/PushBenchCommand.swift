import ArgumentParser
import Foundation
import EmbeddedPostgres
import Logging
import ShortcutSyncBench
import ShortcutSyncStore

/// `shortcut-sync bench push`: pushes over HTTP beside raw inserts, end-to-end latency with many
/// streams open, and the service's memory with them (DESIGN §8).
struct PushBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Push throughput beside raw inserts, push-to-pull latency and memory with many streams (DESIGN §8).",
        discussion: """
            The service runs as a child process (`serve`, this executable) on a fresh database of the \
            same server, so its memory is its own; the load comes from this process.
            """)

    @OptionGroup var load: PushLoadOptions

    @Flag(help: "A short run (1 s per part, 20 streams, 20 samples), to check that it works.")
    var smoke = false

    @Option(help: "Also write the results as JSON to this file.")
    var json: String?

    @Option(help: ArgumentHelp("Run only this push scenario (repeat for several): \(PushBenchmark.Scenario.all.map(\.key).joined(separator: ", ")).",
                               valueName: "name"))
    var scenario: [String] = []

    @Flag(help: "Run the sync worker as a process of its own (`serve --no-worker` beside `worker`), so each one's CPU per event is measured apart.")
    var workerProcess = false

    @Flag(help: """
        Run in the database of --database-url itself (migrated, and kept afterwards) instead of a fresh one beside it: \
        for a Citus coordinator's database, prepared on every node (docs/citus.md).
        """)
    var inPlace = false

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        if inPlace && database.databaseURL == nil && ProcessInfo.processInfo.environment["DATABASE_URL"] == nil {
            throw ValidationError("--in-place needs --database-url (or DATABASE_URL): the embedded PostgreSQL's benchmarks use a fresh database")
        }
        let known = PushBenchmark.Scenario.all.map(\.key)
        if let unknown = scenario.first(where: { !known.contains($0) }) {
            throw ValidationError("no scenario is called \(unknown); there are \(known.joined(separator: ", "))")
        }
    }

    func run() async throws {
        let logger = database.logger(defaultLevel: .error)
        let chosen = PushBenchmark.Scenario.all.filter { scenario.isEmpty || scenario.contains($0.key) }
        let results = try await database.withDatabase(logger: logger, settings: EmbeddedPostgres.statementStatistics) { location in
            try await PushBenchmark.run(server: location.url, inPlace: inPlace, scenarios: chosen, load: load.resolved(smoke: smoke),
                                        workerProcess: workerProcess, logger: logger, report: { print($0) },
                                        interruptible: cancellingOnSignal)
        }
        try BenchOutput.print(results.table, results, json: json)
    }
}

import ArgumentParser
import EmbeddedPostgres
import Logging
import ShortcutSyncBench
import ShortcutSyncStore

/// `shortcut-sync bench all`: every target of DESIGN §8 in one run and one table, each beside
/// raw PostgreSQL on the same database, with the machine it ran on.
struct AllBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "all",
        abstract: "Every target of DESIGN §8: the rebuild figures, the push figures, the sustained ones, the runaway's, then the wake's; one table.",
        discussion: """
            The rebuild part (`bench rebuild`) fills and folds 1,000 accounts × 1,000 events and 10 accounts × 100,000, \
            and the same shapes at 100,000 events for the memory growth from 100k to 1M events. \
            Then `bench push`, `bench sustained`, `bench runaway`, `bench wake` and `bench suggestions` with their defaults, \
            and `bench citus` with its defaults where Citus is installed (it says so and goes on where it is not). \
            A full run takes about 15 minutes on 2 cores.
            """)

    @OptionGroup var load: PushLoadOptions

    @Flag(help: "A short run (small logs, 1 s per push part, 20 streams), to check that it works.")
    var smoke = false

    @Option(help: "Also write the results as JSON to this file.")
    var json: String?

    @OptionGroup var flushProbe: FlushProbeOptions

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let logger = database.logger(defaultLevel: .error)
        let results = try await database.withDatabase(logger: logger, settings: EmbeddedPostgres.statementStatistics) { location in
            let machine = try await BenchMachine.describe(database: location.url, logger: logger)
            print("machine: \(machine)")
            let rebuild = try await cancellingOnSignal {
                try await RebuildBenchmark.run(AllBenchmarks.rebuildShapes(smoke: smoke), server: location.url, logger: logger) { print($0) }
            }
            let push = try await PushBenchmark.run(server: location.url, scenarios: PushBenchmark.Scenario.all, load: load.resolved(smoke: smoke),
                                                   workerProcess: false, logger: logger, report: { print($0) },
                                                   interruptible: cancellingOnSignal)
            let sustained = try await SustainedBenchmark.run(server: location.url, load: smoke ? .smoke : SustainedBenchmark.Load(),
                                                             flushProbeDirectory: flushProbe.directory(location),
                                                             logger: logger, report: { print($0) }, interruptible: cancellingOnSignal)
            let runaway = try await RunawayBenchmark.run(server: location.url, load: smoke ? .smoke : RunawayBenchmark.Load(),
                                                         flushProbeDirectory: flushProbe.directory(location),
                                                         logger: logger, report: { print($0) }, interruptible: cancellingOnSignal)
            let wake = try await cancellingOnSignal {
                try await WakeBenchmark.run(server: location.url, load: smoke ? .smoke : WakeBenchmark.Load(), logger: logger) { print($0) }
            }
            let suggestions = try await cancellingOnSignal {
                try await SuggestionBenchmark.run(server: location.url, load: smoke ? .smoke : SuggestionBenchmark.Load(), logger: logger) { print($0) }
            }
            var citus: CitusBenchmark.Results?
            if CitusNodes.isInstalled {
                // The starting and stopping of the nodes under the signal too (`CitusBenchCommand`).
                citus = try await cancellingOnSignal {
                    try await CitusBenchmark.run(onePostgreSQL: location.url, load: smoke ? .smoke : CitusBenchmark.load, logger: logger,
                                                 report: { print($0) }, interruptible: { try await $0() })
                }
            } else {
                print("bench citus: skipped, Citus is not installed for this machine's PostgreSQL (../shared/citus/build.sh installs it)")
            }
            return AllBenchmarks.Results(machine: machine, rebuild: rebuild, push: push, sustained: sustained, runaway: runaway,
                                         wake: wake, suggestions: suggestions, citus: citus)
        }
        try BenchOutput.print(results.table, results, json: json)
    }
}

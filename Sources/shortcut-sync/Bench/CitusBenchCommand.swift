import ArgumentParser
import EmbeddedPostgres
import Foundation
import Logging
import ShortcutSyncBench
import ShortcutSyncStore

/// `shortcut-sync bench citus`: `bench push`'s parts on one PostgreSQL and on a Citus cluster it
/// starts itself, side by side (docs/citus.md).
struct CitusBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "citus",
        abstract: "Pushes and push-to-pull latency on one PostgreSQL and on a Citus coordinator with two workers, side by side.",
        discussion: """
            Runs `bench push`'s 100-event pushes of 4 devices of 4 accounts, its 1-event pushes of 32 devices and its \
            push-to-pull latency through streams, first on one PostgreSQL (the embedded one, or --database-url), then on a \
            coordinator and two workers that it starts on this machine (Citus must be installed for the embedded PostgreSQL: \
            ../shared/citus/build.sh), once with the service on the coordinator and once with it attached to the first \
            worker and routing each account to the worker of its shards (serve --node --route-by-account), and stops the nodes afterwards, also on an error or a signal. Prints all three with the \
            ratio to one PostgreSQL and each node's PostgreSQL CPU per push (from /proc). The three nodes share this machine's \
            cores with the service and the load. `bench all` runs it too where Citus is installed (--smoke: about 45 s in a \
            debug build).
            """)

    @Option(help: "Seconds each push scenario and each raw insert run lasts.")
    var seconds: Int = Int(CitusBenchmark.load.duration.components.seconds)

    @Option(help: "Devices holding their streams open for the latency figure.")
    var streams: Int = CitusBenchmark.load.streams

    @Option(help: "Push-to-pull samples for the latency figure.")
    var samples: Int = CitusBenchmark.load.samples

    @Flag(help: "A short run (1 s per part, 20 streams, 20 samples), to check that it works.")
    var smoke = false

    @Option(help: "Also write the results as JSON to this file.")
    var json: String?

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        if seconds < 1 || streams < 2 || samples < 1 { throw ValidationError("--seconds must be 1 or more, --streams 2 or more, --samples 1 or more") }
        guard CitusNodes.isInstalled else {
            throw ValidationError("Citus is not installed for this machine's PostgreSQL (no citus.so in its lib directory): run ../shared/citus/build.sh")
        }
    }

    func run() async throws {
        let logger = database.logger(defaultLevel: .error)
        let load = smoke ? PushBenchmark.Load.smoke : PushBenchmark.Load(duration: .seconds(seconds), streams: streams, samples: samples)
        // The whole run, starting and stopping included, under the signal: a SIGINT while the
        // nodes start cancels the start, and `CitusNodes` still stops every node it started.
        let results = try await cancellingOnSignal {
            try await database.withDatabase(logger: logger, settings: EmbeddedPostgres.statementStatistics) { location in
                try await CitusBenchmark.run(onePostgreSQL: location.url, load: load, logger: logger, report: { print($0) },
                                             interruptible: { try await $0() })
            }
        }
        try BenchOutput.print(results.table, results, json: json)
    }
}

import ArgumentParser
import Foundation
import Logging
import ShortcutSyncBench
import ShortcutSyncStore

/// `shortcut-sync bench compact`: what compacting history saves and costs (issue 58, item 5).
struct CompactBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Bytes of one heavy account before and after a compaction, the compaction's speed, a rebuild of compacted accounts beside uncompacted ones, and other accounts' push p99 while the maintenance tasks compact.",
        discussion: """
            Two scratch databases, dropped afterwards: one holding only an account whose 3 devices donated --donations times \
            to 50 shortcuts; one with --accounts accounts × --events-per-account events, rebuilt uncompacted, compacted by the \
            maintenance tasks (retention 1 s) while other accounts push, then rebuilt with short tails.
            """)

    @Option(help: "Donations of the heavy account.") var donations = CompactBenchmark.Load().donations
    @Option(help: "Accounts of the rebuild and the background compaction.") var accounts = CompactBenchmark.Load().accounts
    @Option(help: "Events of each of them.") var eventsPerAccount = CompactBenchmark.Load().eventsPerAccount
    @Option(help: "Seconds of other accounts' pushes without compaction, and at most while it runs.") var pushSeconds = CompactBenchmark.Load().pushSeconds
    @Option(help: "The most of one connection's time compacting takes, above 0 and at most 1 (serve's and worker's share).")
    var compactionShare = CompactBenchmark.Load().compactionShare
    @Flag(help: "The heavy account alone: its bytes, and the compaction's time and the memory it takes (run at 100000 and 1000000 --donations to compare).")
    var heavyOnly = false
    @Flag(help: "Small sizes, to check that it works.") var smoke = false
    @Option(help: "Also write the results as JSON to this file.") var json: String?
    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        if donations < 100 || accounts < 1 || eventsPerAccount < 10 || pushSeconds <= 0 {
            throw ValidationError("--donations must be 100 or more, --accounts 1 or more, --events-per-account 10 or more, --push-seconds above 0")
        }
        guard CompactionSchedule.shareRange.contains(compactionShare) else {
            throw ValidationError("--compaction-share must be \(CompactionSchedule.shareRange.lowerBound) to \(CompactionSchedule.shareRange.upperBound)")
        }
    }

    func run() async throws {
        let logger = database.logger(defaultLevel: .error)
        let load = smoke ? CompactBenchmark.Load.smoke : {
            var load = CompactBenchmark.Load()
            load.donations = donations
            load.accounts = accounts
            load.eventsPerAccount = eventsPerAccount
            load.pushSeconds = pushSeconds
            load.compactionShare = compactionShare
            return load
        }()
        let chosen = { var chosen = load; chosen.heavyOnly = heavyOnly; return chosen }()
        let result = try await database.withDatabase(logger: logger) { location in
            try await cancellingOnSignal {
                var benchmark = CompactBenchmark(load: chosen, server: location.url, logger: logger)
                // Each line at once, also into a file: a long run's progress is seen as it goes.
                benchmark.report = { FileHandle.standardOutput.write(Data(($0 + "\n").utf8)) }
                return try await benchmark.run()
            }
        }
        try BenchOutput.print(result.table, result, json: json)
    }
}

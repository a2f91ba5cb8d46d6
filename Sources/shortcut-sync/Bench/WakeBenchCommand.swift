import ArgumentParser
import Logging
import ShortcutSyncBench
import ShortcutSyncStore

/// `shortcut-sync bench wake`: change → background wake, through `serve` and the local APNs
/// stand-in, and no second wake within the interval (DESIGN §8).
struct WakeBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wake",
        abstract: "How long after a change a sleeping device is woken (through a local APNs stand-in), and that it is woken once.")

    @Option(help: "Accounts, each with a device that changes something and one asleep with a push token.")
    var accounts: Int = 50

    @Flag(help: "A short run (5 accounts), to check that it works.")
    var smoke = false

    @Option(help: "Also write the results as JSON to this file.")
    var json: String?

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        guard (1...10_000).contains(accounts) else { throw ValidationError("--accounts must be 1 to 10000") }
    }

    func run() async throws {
        let logger = database.logger(defaultLevel: .error)
        let load = smoke ? WakeBenchmark.Load.smoke : WakeBenchmark.Load(accounts: accounts)
        let result = try await database.withDatabase(logger: logger) { location in
            try await cancellingOnSignal {
                try await WakeBenchmark.run(server: location.url, load: load, logger: logger, report: { print($0) })
            }
        }
        try BenchOutput.print(result.table, result, json: json)
    }
}

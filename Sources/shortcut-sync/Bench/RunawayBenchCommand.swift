import ArgumentParser
import Logging
import ShortcutSyncBench
import ShortcutSyncStore

/// `shortcut-sync bench runaway`: calm accounts' pushes with and without one account pushing as
/// fast as it can, the service running with a person's push budgets (issue 19).
struct RunawayBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "runaway",
        abstract: "Calm accounts' push latency alone and beside one account pushing as fast as it can (push budgets on).")

    @Option(help: "Calm accounts, each pushing a 10-event batch about once a second.")
    var calmAccounts: Int = 100

    @Option(help: "Devices of the runaway account, each pushing 100-event batches back to back.")
    var runawayDevices: Int = 8

    @Option(help: "Seconds each run (without, then with the runaway) lasts.")
    var seconds: Int = 10

    @Flag(help: "A short run (10 calm accounts, 2 runaway devices, 2 s each), to check that it works.")
    var smoke = false

    @Option(help: "Also write the results as JSON to this file.")
    var json: String?

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        if calmAccounts < 1 || runawayDevices < 1 || seconds < 1 {
            throw ValidationError("--calm-accounts, --runaway-devices and --seconds must be 1 or more")
        }
    }

    func run() async throws {
        let logger = database.logger(defaultLevel: .error)
        let load = smoke ? RunawayBenchmark.Load.smoke
            : RunawayBenchmark.Load(calmAccounts: calmAccounts, runawayDevices: runawayDevices, duration: .seconds(seconds))
        let result = try await database.withDatabase(logger: logger) { location in
            try await RunawayBenchmark.run(server: location.url, load: load, logger: logger, report: { print($0) },
                                           interruptible: cancellingOnSignal)
        }
        try BenchOutput.print(result.table, result, json: json)
    }
}

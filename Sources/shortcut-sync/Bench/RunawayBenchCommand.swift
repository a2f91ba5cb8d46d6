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

    @Option(help: "Seconds each side (without, and with the runaway) is measured in all, over its rounds.")
    var seconds: Int = 20

    @Option(help: "Rounds of each side, in turns (without, with, without…), pooled: the machine's other load falls on both alike.")
    var rounds: Int = 5

    @Flag(help: "A short run (10 calm accounts, 2 runaway devices, 2 s each side in 2 rounds), to check that it works.")
    var smoke = false

    @Option(help: "Also write the results as JSON to this file.")
    var json: String?

    @OptionGroup var flushProbe: FlushProbeOptions

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        if calmAccounts < 1 || runawayDevices < 1 || seconds < 1 || rounds < 1 {
            throw ValidationError("--calm-accounts, --runaway-devices, --seconds and --rounds must be 1 or more")
        }
        if rounds > seconds {
            throw ValidationError("--rounds (\(rounds)) must not be more than --seconds (\(seconds)): a round of a side lasts at least a second")
        }
    }

    func run() async throws {
        let logger = database.logger(defaultLevel: .error)
        let load = smoke ? RunawayBenchmark.Load.smoke
            : RunawayBenchmark.Load(calmAccounts: calmAccounts, runawayDevices: runawayDevices, duration: .seconds(seconds), rounds: rounds)
        let result = try await database.withDatabase(logger: logger) { location in
            try await RunawayBenchmark.run(server: location.url, load: load, flushProbeDirectory: flushProbe.directory(location),
                                           logger: logger, report: { print($0) },
                                           interruptible: cancellingOnSignal)
        }
        try BenchOutput.print(result.table, result, json: json)
    }
}

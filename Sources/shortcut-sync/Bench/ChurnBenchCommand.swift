import ArgumentParser
import Logging
import ShortcutSyncBench
import ShortcutSyncStore

/// `shortcut-sync bench churn`: a quiet account's pulls before, during and after devices are
/// signed in and out by many accounts, each within its budget (issue 56).
struct ChurnBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "churn",
        abstract: "A quiet account's pull latency before, during and after sign-in/sign-out churn within the accounts' budgets.")

    @Option(help: "Churn rounds (sign in, pull once, sign out) in all.")
    var rounds: Int = 10_000

    @Option(help: "Rounds per churning account: within its sign-in budget's burst (30).")
    var perAccount: Int = 30

    @Option(help: "Churning accounts at work at once.")
    var concurrency: Int = 8

    @Option(help: "The quiet account's pulls measured before the churn, and again after.")
    var pulls: Int = 4_000

    @Option(help: "Other devices that pull once first, so that the token cache holds their entries.")
    var warmDevices: Int = 3_000

    @Flag(help: "A short run (100 rounds), to check that it works.")
    var smoke = false

    @Option(help: "Also write the results as JSON to this file.")
    var json: String?

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        guard rounds >= 1, (1...30).contains(perAccount), concurrency >= 1, pulls >= 8, warmDevices >= 0 else {
            throw ValidationError("--rounds, --concurrency 1 or more, --per-account 1 to 30, --pulls 8 or more, --warm-devices 0 or more")
        }
    }

    func run() async throws {
        let logger = database.logger(defaultLevel: .error)
        let load = smoke ? ChurnBenchmark.Load.smoke
            : ChurnBenchmark.Load(rounds: rounds, perAccount: perAccount, concurrency: concurrency, pulls: pulls, warmDevices: warmDevices)
        let result = try await database.withDatabase(logger: logger) { location in
            try await cancellingOnSignal {
                try await ChurnBenchmark.run(server: location.url, load: load, logger: logger, report: { print($0) })
            }
        }
        try BenchOutput.print(result.table, result, json: json)
    }
}

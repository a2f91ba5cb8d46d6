import ArgumentParser
import Logging
import ShortcutSyncBench
import ShortcutSyncDomain
import ShortcutSyncStore

/// `shortcut-sync bench suggestions`: a seeded synthetic population replayed through the HTTP
/// API, the service's suggestions scored beside the baselines and the oracle (issue 21).
struct SuggestionsBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "suggestions",
        abstract: "Suggestions of a synthetic population, replayed through the API, against most-frequent, most-recent and the oracle; request p99 at 1,000 shortcuts (or --latency-shortcuts).")

    @Option(help: "People in the population.")
    var people: Int = 60

    @Option(help: "Weeks replayed (from Monday 2026-01-05).")
    var weeks: Int = 10

    @Option(help: "The seed of the population and of its happenings.")
    var seed: UInt64 = 21

    @Option(help: "People replayed side by side.")
    var concurrency: Int = 8

    @Option(help: "Shortcuts of the account whose requests are timed (at most the bound per account, 10,000).")
    var latencyShortcuts: Int?

    @Option(help: "Donation groups of each of those shortcuts (at most the bound per shortcut, 16).")
    var latencyGroups: Int?

    @Flag(help: "The timed devices report none of the account's apps installed: each request walks every shortcut.")
    var latencyNoAppsInstalled = false

    @Option(help: "Suggestions requests timed, one after another.")
    var latencyRequests: Int?

    @Flag(help: "A short run (3 people, 3 weeks, 200 latency requests), to check that it works.")
    var smoke = false

    @Option(help: "Also write the results as JSON to this file.")
    var json: String?

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        if !(1...10_000).contains(people) || !(1...52).contains(weeks) || !(1...256).contains(concurrency) {
            throw ValidationError("--people must be 1 to 10,000, --weeks 1 to 52, --concurrency 1 to 256")
        }
        if let latencyShortcuts, !(1...Limits.maxShortcutsPerAccount).contains(latencyShortcuts) {
            throw ValidationError("--latency-shortcuts must be 1 to \(Limits.maxShortcutsPerAccount), the bound per account")
        }
        if let latencyGroups, !(1...Limits.maxGroupsPerShortcut).contains(latencyGroups) {
            throw ValidationError("--latency-groups must be 1 to \(Limits.maxGroupsPerShortcut), the bound per shortcut")
        }
        if let latencyRequests, !(100...1_000_000).contains(latencyRequests) {
            throw ValidationError("--latency-requests must be 100 to 1,000,000")
        }
    }

    func run() async throws {
        let logger = database.logger(defaultLevel: .error)
        var load = smoke ? SuggestionBenchmark.Load.smoke
            : SuggestionBenchmark.Load(people: people, weeks: weeks, seed: seed, concurrency: concurrency)
        if let latencyShortcuts { load.latencyShortcuts = latencyShortcuts }
        if let latencyRequests { load.latencyRequests = latencyRequests }
        if let latencyGroups { load.latencyGroups = latencyGroups }
        if latencyNoAppsInstalled { load.latencyNoAppsInstalled = true }
        let chosen = load
        let result = try await database.withDatabase(logger: logger) { location in
            let machine = try await BenchMachine.describe(database: location.url, logger: logger)
            print("machine: \(machine)")
            return try await cancellingOnSignal {
                try await SuggestionBenchmark.run(server: location.url, load: chosen, logger: logger) { print($0) }
            }
        }
        try BenchOutput.print(result.table, result, json: json)
    }
}

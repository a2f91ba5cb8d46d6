import ArgumentParser
import ShortcutSyncBench
import ShortcutSyncStore

/// `shortcut-sync bench rebuild`: the maintenance fold of an imported backlog and a rebuild,
/// beside a raw ordered read of the same log.
struct RebuildBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rebuild",
        abstract: "Fill a fresh database with a realistic log; time a raw ordered read, the maintenance fold of it as an imported backlog, and a rebuild.",
        discussion: """
            The log is written as live traffic writes it: 10-event pushes, the accounts interleaved. \
            Without --accounts and --events-per-account it runs both shapes of DESIGN §8: 1,000 accounts × 1,000 events and 10 accounts × 100,000.
            """,
        aliases: ["worker"])

    @Option(help: "Accounts in the log.")
    var accounts: Int?

    @Option(help: "Events per account.")
    var eventsPerAccount: Int?

    @Option(help: "Also write the results as JSON to this file.")
    var json: String?

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        if (accounts == nil) != (eventsPerAccount == nil) {
            throw ValidationError("give both --accounts and --events-per-account, or neither (both shapes of DESIGN §8)")
        }
        if let accounts, let eventsPerAccount, accounts < 1 || eventsPerAccount < 1 {
            throw ValidationError("--accounts and --events-per-account must be 1 or more")
        }
    }

    func run() async throws {
        let logger = database.logger
        let shapes = if let accounts, let eventsPerAccount {
            [RebuildBenchmark.Shape(accounts: accounts, eventsPerAccount: eventsPerAccount)]
        } else {
            RebuildBenchmark.Shape.design
        }
        let results = try await database.withDatabase { location in
            try await cancellingOnSignal {
                try await RebuildBenchmark.run(shapes, server: location.url, logger: logger) { print($0) }
            }
        }
        try BenchOutput.print(RebuildBenchmark.table(results), results, json: json)
    }
}

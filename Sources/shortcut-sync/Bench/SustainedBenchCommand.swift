import ArgumentParser
import Logging
import ShortcutSyncBench
import ShortcutSyncStore

/// `shortcut-sync bench sustained`: the rate the service sustains with many accounts pushing at
/// once, and push-to-pull latency at 80 % of it (DESIGN §8).
struct SustainedBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sustained",
        abstract: "Sustained pushes from many accounts at once, push-to-pull latency at 80 % of that rate, and every view checked (DESIGN §8).",
        discussion: """
            Each account has a pusher and a reader holding its stream open. First every pusher \
            pushes 10-event batches back to back (the sustained rate); then each pushes on its own \
            schedule at 80 % of that rate while a few sample accounts measure push → another \
            device's pull, woken by its stream. Last, every load account's devices pull their whole \
            view, which must show every acknowledged event; the command fails if one does not. \
            The service runs as a child process (`serve`, this executable) on a fresh database of \
            the same server; the load comes from this process.
            """)

    @Option(help: "Accounts pushing at once (a pusher and a reader each).")
    var accounts: Int = 1000

    @Option(help: "Accounts, a pusher and a reader each, taking the latency samples.")
    var sampleAccounts: Int = 20

    @Option(help: "Seconds each phase (the sustained run, the run at --share) lasts.")
    var seconds: Int = 20

    @Option(help: "The share of the sustained rate the second phase offers (DESIGN §8's targets are at 0.5 and 0.8, and at 1.5 past capacity, where every answer must come within 2 s; lower shares show how latency grows with load).")
    var share: Double = 0.8

    @Flag(help: "A short run (50 accounts, 5 sample accounts, 2 s per phase), to check that it works.")
    var smoke = false

    @Option(help: "Also write the results as JSON to this file.")
    var json: String?

    @OptionGroup var flushProbe: FlushProbeOptions

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        if !(0.05...2).contains(share) { throw ValidationError("--share must be 0.05 to 2") }
        if accounts < 1 || sampleAccounts < 1 || seconds < 1 {
            throw ValidationError("--accounts, --sample-accounts and --seconds must be 1 or more")
        }
    }

    func run() async throws {
        let logger = database.logger(defaultLevel: .error)
        let load = smoke ? SustainedBenchmark.Load.smoke
            : SustainedBenchmark.Load(accounts: accounts, sampleAccounts: sampleAccounts, duration: .seconds(seconds), share: share)
        let results = try await database.withDatabase(logger: logger) { location in
            try await SustainedBenchmark.run(server: location.url, load: load, flushProbeDirectory: flushProbe.directory(location),
                                             logger: logger, report: { print($0) },
                                             interruptible: cancellingOnSignal)
        }
        try BenchOutput.print(results.table, results, json: json)
    }
}

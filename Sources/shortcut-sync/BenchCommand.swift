import ArgumentParser
import Foundation
import Logging
import PostgresNIO
import ShortcutSyncBench
import ShortcutSyncStore

/// `shortcut-sync bench`: the benchmarks of DESIGN §8, each beside raw PostgreSQL on the same database.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench", abstract: "Measure the service beside raw PostgreSQL (DESIGN §8).",
        subcommands: [AllBenchCommand.self, WorkerBenchCommand.self, PushBenchCommand.self])
}

/// Prints a benchmark's table, and writes its results as JSON to `json` when given.
func printResults(_ table: String, _ results: some Encodable, json: String?) throws {
    print()
    print(table)
    guard let json else { return }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    try encoder.encode(results).write(to: URL(fileURLWithPath: json))
    print("wrote \(json)")
}

/// `shortcut-sync bench worker`: the worker's catch-up and a rebuild, beside a raw ordered read.
struct WorkerBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Fill a fresh database with a realistic log; time a raw ordered read, the worker's catch-up and a rebuild.",
        discussion: "Without --accounts and --events-per-account it runs both shapes of DESIGN §8: 1,000 accounts × 1,000 events and 10 accounts × 100,000.")

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
            [WorkerBenchmark.Shape(accounts: accounts, eventsPerAccount: eventsPerAccount)]
        } else {
            [WorkerBenchmark.Shape(accounts: 1000, eventsPerAccount: 1000), WorkerBenchmark.Shape(accounts: 10, eventsPerAccount: 100_000)]
        }
        let location = try await database.resolve()
        defer { location.close() }
        let results = try await cancellingOnSignal { try await Self.measure(shapes, at: location.url, logger: logger) }
        try printResults(Self.table(results), results, json: json)
    }

    /// Runs each shape in a database of its own, dropped afterwards.
    static func measure(_ shapes: [WorkerBenchmark.Shape], at server: DatabaseURL, logger: Logger) async throws -> [WorkerBenchmark.Result] {
        var results: [WorkerBenchmark.Result] = []
        for shape in shapes {
            let name = "shortcut_sync_bench_\(UInt32.random(in: 0...UInt32.max))"
            let url = server.with(database: name)
            try await url.createDatabaseIfMissing(logger: logger)
            do {
                try await Migrator.migrate(url, logger: logger)
                var benchmark = WorkerBenchmark(shape: shape, database: url, logger: logger)
                benchmark.report = { line in print("  \(line)") }
                print("\(shape.accounts) accounts × \(shape.eventsPerAccount) events, database \(name):")
                results.append(try await benchmark.run())
            } catch {
                try? await url.dropDatabase(logger: logger)
                throw error
            }
            try await url.dropDatabase(logger: logger)
        }
        return results
    }

    /// One line per shape: ours beside raw, and the ratio.
    static func table(_ results: [WorkerBenchmark.Result]) -> String {
        func rate(_ value: Double) -> String { String(format: "%.0f", value) }
        func megabytes(_ bytes: Int?) -> String { bytes.map { String(format: "%.0f MB", Double($0) / 1_048_576) } ?? "?" }
        var lines = ["| shape | events | raw ordered read (ev/s) | catch-up (ev/s) | ratio | rebuild (ev/s) | ratio | peak RSS catch-up / rebuild |",
                     "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for result in results {
            let raw = result.rawOrderedRead.eventsPerSecond
            lines.append("| \(result.shape.accounts) × \(result.shape.eventsPerAccount) | \(result.shape.events) | \(rate(raw)) | "
                + "\(rate(result.catchUp.eventsPerSecond)) | \(String(format: "%.3f", result.catchUp.eventsPerSecond / raw)) | "
                + "\(rate(result.rebuild.eventsPerSecond)) | \(String(format: "%.3f", result.rebuild.eventsPerSecond / raw)) | "
                + "\(megabytes(result.catchUp.peakResidentBytes)) / \(megabytes(result.rebuild.peakResidentBytes)) |")
        }
        return lines.joined(separator: "\n")
    }
}

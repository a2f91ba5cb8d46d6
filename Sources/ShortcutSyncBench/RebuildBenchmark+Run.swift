import Foundation
import Logging
import ShortcutSyncStore

extension RebuildBenchmark.Shape {
    /// The two shapes of DESIGN §8: 1,000 accounts × 1,000 events and 10 accounts × 100,000.
    public static let design = [Self(accounts: 1000, eventsPerAccount: 1000), Self(accounts: 10, eventsPerAccount: 100_000)]
}

extension RebuildBenchmark {
    /// Runs each shape in a database of its own on `server`, dropped afterwards; `report` is
    /// told which database each shape fills, and what the run is doing.
    public static func run(_ shapes: [Shape], server: DatabaseURL, logger: Logger,
                           report: @escaping @Sendable (String) -> Void) async throws -> [Result] {
        var results: [Result] = []
        for shape in shapes {
            let name = "shortcut_sync_bench_\(UInt32.random(in: 0...UInt32.max))"
            let url = server.with(database: name)
            try await url.createDatabaseIfMissing(logger: logger)
            do {
                try await Migrator.migrate(url, logger: logger)
                var benchmark = RebuildBenchmark(shape: shape, database: url, logger: logger)
                benchmark.report = { line in report("  \(line)") }
                report("\(shape.accounts) accounts × \(shape.eventsPerAccount) events, database \(name):")
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
    public static func table(_ results: [Result]) -> String {
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

import Foundation
@testable import ShortcutSyncBench
import Testing

/// `bench push`'s row for 1-event pushes gives the service's CPU per push beside the stack's
/// floor's twice: measured one after the other, and measured at once (`SideBySide`).
@Suite struct PushTableTests {
    static func row(floor: Double?, sideBySide: PushBenchmark.SideBySide?) throws -> String {
        let scenario = try #require(PushBenchmark.Scenario.all.first { $0.key == "single-events" })
        var figure = PushBenchmark.Throughput(scenario: scenario, oursEventsPerSecond: 1_200, rawRowsPerSecond: 4_000, pushP50Milliseconds: 20,
                                              pushP99Milliseconds: 50, failedPushes: 0, serviceCPUMicrosecondsPerEvent: 500)
        figure.floorCPUMicrosecondsPerPush = floor
        figure.sideBySide = sideBySide
        let results = PushBenchmark.Results(throughput: [figure], latency: .init(streams: 20, samples: 20, p50Milliseconds: 5, p99Milliseconds: 10))
        return try #require(results.table.split(separator: "\n").map(String.init).first { $0.hasPrefix("| 1-event pushes, 32 devices |") })
    }

    @Test func theFloorMeasuredAtOnceWithTheServiceIsGivenBesideTheOneMeasuredAfter() throws {
        let both = try Self.row(floor: 250, sideBySide: .init(oursCPUMicrosecondsPerPush: 660, floorCPUMicrosecondsPerPush: 300))
        #expect(both.contains("| 500 µs (the stack's floor 250 µs a push; ours 2.00×; side by side 2.20×) |"))

        let afterOnly = try Self.row(floor: 250, sideBySide: nil)
        #expect(afterOnly.contains("| 500 µs (the stack's floor 250 µs a push; ours 2.00×) |"))

        // A floor whose CPU was not measured gives no ratio, at once or after.
        let none = try Self.row(floor: nil, sideBySide: nil)
        #expect(none.contains("| 500 µs |"))
        #expect(PushBenchmark.SideBySide(oursCPUMicrosecondsPerPush: 660, floorCPUMicrosecondsPerPush: 0).oursOverFloor == nil)
    }

    /// A row of 100-event pushes with `pgbench` rows a second (or none).
    static func batchesRow(pgbench: Double?) throws -> (row: String, header: String, json: String) {
        let scenario = try #require(PushBenchmark.Scenario.all.first { $0.key == "batches" })
        var figure = PushBenchmark.Throughput(scenario: scenario, oursEventsPerSecond: 6_000, rawRowsPerSecond: 10_000, pushP50Milliseconds: 60,
                                              pushP99Milliseconds: 90, failedPushes: 0, serviceCPUMicrosecondsPerEvent: 40)
        figure.pgbenchRowsPerSecond = pgbench
        let latency = PushBenchmark.Latency(streams: 20, samples: 20, p50Milliseconds: 5, p99Milliseconds: 10, serviceResidentBytes: 70_000_000,
                                            serviceIdleResidentBytes: 68_000_000)
        let results = PushBenchmark.Results(throughput: [figure], latency: latency)
        let lines = results.table.split(separator: "\n").map(String.init)
        let columns = Set(lines.map { $0.filter { $0 == "|" }.count })
        #expect(columns.count == 1, "every row has the header's columns: \(lines)")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: try encoder.encode(results), as: UTF8.self)
        return (try #require(lines.first { $0.hasPrefix("| 100-event pushes, 4 devices of 4 accounts |") }), lines[0], json)
    }

    @Test func bothRawsAndBothRatiosAreGivenTheTargetAgainstPostgresNIOs() throws {
        let both = try Self.batchesRow(pgbench: 20_000)
        #expect(both.header.hasPrefix("| what | ours | raw (PostgresNIO) | ratio | target | raw (pgbench) | ratio to pgbench |"))
        #expect(both.row.contains("| 6000 ev/s | 10000 rows/s (4 clients, 100-row transactions) | 0.60 | ≥ 0.50 | 20000 rows/s | 0.30 |"))
        #expect(both.json.contains(#""ratios":{"batches":{"toPgbenchRaw":0.3,"toPostgresNIORaw":0.6}}"#))
        #expect(both.json.contains(#""pgbenchRowsPerSecond":20000"#))

        let without = try Self.batchesRow(pgbench: nil)
        #expect(without.row.contains("| 0.60 | ≥ 0.50 | not measured | — |"))
        #expect(without.json.contains(#""ratios":{"batches":{"toPgbenchRaw":null,"toPostgresNIORaw":0.6}}"#))
    }
}

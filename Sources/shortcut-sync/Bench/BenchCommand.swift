import ArgumentParser

/// `shortcut-sync bench`: the benchmarks of DESIGN §8, each beside raw PostgreSQL on the same database.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench", abstract: "Measure the service beside raw PostgreSQL (DESIGN §8).",
        subcommands: [AllBenchCommand.self, RebuildBenchCommand.self, PushBenchCommand.self, SustainedBenchCommand.self, RunawayBenchCommand.self,
                      WakeBenchCommand.self, SuggestionsBenchCommand.self, ChurnBenchCommand.self, CitusBenchCommand.self, CompactBenchCommand.self, StackFloorCommand.self])
}

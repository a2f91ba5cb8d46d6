import ArgumentParser
import ShortcutSyncStore

/// `--keep-history`: how long a `serve` or `worker` process's maintenance tasks keep an account's
/// events whole before they compact them (docs/operating.md, "How much disk a person costs").
struct KeepHistoryOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "How long events are kept whole: the maintenance tasks compact an account once \(CompactionSchedule.defaultMinimumEvents) of its events are older than this (90d, 12h, 30m, 45s). 0 or forever: keep everything.",
        valueName: "duration"))
    var keepHistory = "90d"

    @Option(name: .long, help: ArgumentHelp(
        "The most of one connection's time the compacting task takes, 0.001 to 1: after a compaction that took t it rests t × (1 − share) / share.",
        valueName: "fraction"))
    var compactionShare = CompactionSchedule.defaultShare

    func validate() throws {
        if case .failure(let error) = CompactionSchedule.keepHistory(parsing: keepHistory) { throw ValidationError("--keep-history: \(error)") }
        guard CompactionSchedule.shareRange.contains(compactionShare) else {
            throw ValidationError("--compaction-share must be \(CompactionSchedule.shareRange.lowerBound) to \(CompactionSchedule.shareRange.upperBound), not \(compactionShare)")
        }
    }

    /// The maintenance tasks' schedule; nil for `0` and `forever`.
    func schedule() throws -> CompactionSchedule? {
        try CompactionSchedule.keepHistory(parsing: keepHistory).get().map { CompactionSchedule(keepHistory: $0, share: compactionShare) }
    }
}

import ArgumentParser
import ShortcutSyncStore

/// `--keep-history`: how long a `serve` or `worker` process's maintenance tasks keep an account's
/// events whole before they compact them (docs/operating.md, "How much disk a person costs").
struct KeepHistoryOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "How long events are kept whole: the maintenance tasks compact an account once \(CompactionSchedule.defaultMinimumEvents) of its events are older than this (90d, 12h, 30m, 45s). 0 or forever: keep everything.",
        valueName: "duration"))
    var keepHistory = "90d"

    func validate() throws {
        if case .failure(let error) = CompactionSchedule.keepHistory(parsing: keepHistory) { throw ValidationError("--keep-history: \(error)") }
    }

    /// The maintenance tasks' schedule; nil for `0` and `forever`.
    func schedule() throws -> CompactionSchedule? {
        try CompactionSchedule.keepHistory(parsing: keepHistory).get().map { CompactionSchedule(keepHistory: $0) }
    }
}

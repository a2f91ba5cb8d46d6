import Foundation

extension CompactBenchmark.Result {
    /// Issue 58's targets, each with the figure measured and whether it is met.
    public var table: String {
        func count(_ value: Double) -> String { Int(value.rounded()).formatted(.number.grouping(.automatic)) }
        func verdict(_ met: Bool) -> String { met ? "met" : "**not met**" }
        let accounts = Double(load.accounts)
        func megabytes(_ bytes: Int?) -> String { bytes.map { String(format: "%.1f MB", Double($0) / 1e6) } ?? "—" }
        let heavy = [
            "| bench compact | before | after | ratio | target | |",
            "| --- | --- | --- | --- | --- | --- |",
            "| one account, \(count(Double(load.donations))) donations by 3 devices to 50 shortcuts: its rows (pg_column_size) | "
                + "\(count(Double(before.rows))) B (\(count(Double(before.events))) events) | \(count(Double(after.rows))) B (\(count(Double(after.events))) events) | "
                + String(format: "%.4f", before.rows > 0 ? Double(after.rows) / Double(before.rows) : 0)
                + " | ≤ 200 KB after | \(verdict(after.rows <= 200_000)) |",
            "| the same, every relation of a database holding only it (VACUUM FULL) | \(count(Double(before.relations))) B | \(count(Double(after.relations))) B | "
                + String(format: "%.4f", before.relations > 0 ? Double(after.relations) / Double(before.relations) : 0) + " | — | |",
            "| compaction at its head | \(count(Double(eventsRemoved))) events removed in " + String(format: "%.3f s", compactionSeconds)
                + " | \(count(removedPerSecond)) events/s | — | ≥ 50,000 events/s | \(verdict(removedPerSecond >= 50_000)) |",
            "| of which the account's head held (its pushes wait) | " + String(format: "%.3f s", headHeldSeconds) + " | — | — | — | |",
            "| the bench process's resident memory, when the compaction began / its high-water mark during it | "
                + "\(megabytes(residentBeforeCompaction)) | \(megabytes(peakResidentDuringCompaction)) | — | the same at 100,000 and 1,000,000 events (within 20 %) | |",
        ]
        guard !load.heavyOnly else { return heavy.joined(separator: "\n") }
        return (heavy + [
            "| rebuild of \(count(accounts)) accounts × \(count(Double(load.eventsPerAccount))) events, then compacted with \(load.tailEvents)-event tails | "
                + "\(count(accounts / rebuildUncompactedSeconds)) accounts/s | \(count(accounts / rebuildCompactedSeconds)) accounts/s | "
                + String(format: "%.2f×", rebuildRatio) + " | ≥ 10× | \(verdict(rebuildRatio >= 10)) |",
            "| other accounts' push p99 (\(load.pushers) pushers, 10 events, no HTTP), without / while the maintenance tasks compact "
                + "(\(count(Double(backgroundEventsRemoved))) events of \(count(accounts)) accounts in " + String(format: "%.1f s", backgroundSeconds)
                + ", compacting at most " + String(format: "%.0f %%", load.compactionShare * 100) + " of a connection's time) | "
                + String(format: "%.2f ms (%d pushes in %.1f s)", pushesWithout.p99Milliseconds, pushesWithout.count, pushesWithout.seconds) + " | "
                + String(format: "%.2f ms (%d pushes in %.1f s)", pushesDuring.p99Milliseconds, pushesDuring.count, pushesDuring.seconds) + " | "
                + String(format: "%.2f×", p99Ratio) + " | ≤ 1.2× | \(verdict(p99Ratio <= 1.2)) |",
        ]).joined(separator: "\n")
    }
}

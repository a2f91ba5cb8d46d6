import Foundation

/// When the maintenance tasks compact an account by themselves (`serve`/`worker --keep-history`,
/// docs/operating.md "How much disk a person costs"): once at least `minimumEvents` of its events
/// past its horizon are older than `keepHistory`, through the last version recorded before
/// now − `keepHistory`.
public struct CompactionSchedule: Sendable, Hashable {
    /// The default retention: 90 days (docs/decisions.md, "How long history is kept").
    public static let defaultKeepHistory = Duration.seconds(90 * 86_400)
    /// The default of `minimumEvents` (docs/decisions.md): about 0.9 MB of log at 940 bytes an event.
    public static let defaultMinimumEvents = 1_000

    /// How long an event is kept whole in the log.
    public var keepHistory: Duration
    /// The fewest events older than the retention that make an account worth compacting: a
    /// compaction folds the account's snapshot and checks every one of its rows, whatever it removes.
    public var minimumEvents: Int
    /// How long a compaction that removed nothing (no clean cut, an account behind) waits before
    /// its account is looked at again; after a failed one, this doubled for each failure in a row
    /// (`retry(afterFailures:)`).
    public var retryAfter: Duration
    /// How long an account a task took for compaction is not taken by another
    /// (`ProjectionStore.compactNextDue`): the compaction's time, and after a task that died
    /// in it, how long its account waits (one stopped gives it back). An hour: a compaction of a
    /// million events took 25 s.
    public var claim: Duration = .seconds(3_600)
    /// How long the compacting task waits, when no account is due, before it looks again.
    public var poll: Duration
    /// The most of one connection's time that compacting takes, within `shareRange`: after a
    /// compaction that took t, the task rests t × (1 − share) / share before the next one.
    /// Compaction is background work with months to do it in; the pushes it competes with are
    /// not (docs/decisions.md, "How long history is kept").
    public var share: Double

    /// The default of `share`: a tenth of one connection's time, the share at which `bench
    /// compact` measured other accounts' push p99 within 1.2× of it without compaction
    /// (docs/benchmarks.md, "Compaction's share of a connection").
    public static let defaultShare = 0.1

    /// The shares a schedule takes (issue 65, item 10): from a thousandth, a rest of 999 times a
    /// compaction's time (half a day after 45 s), to all of it. Below, a rest is too long to
    /// mean anything and, near 0, past what a `Duration` holds (`--compaction-share 1e-300`
    /// would have trapped the first rest).
    public static let shareRange: ClosedRange<Double> = 0.001...1

    public init(keepHistory: Duration = Self.defaultKeepHistory, minimumEvents: Int = Self.defaultMinimumEvents,
                retryAfter: Duration = .seconds(3_600), poll: Duration = .seconds(60), share: Double = Self.defaultShare) {
        precondition(keepHistory > .zero && minimumEvents > 0, "a schedule keeps some history and compacts at least one event")
        precondition(Self.shareRange.contains(share), "compacting takes \(Self.shareRange) of a connection's time, not \(share)")
        self.keepHistory = keepHistory
        self.minimumEvents = minimumEvents
        self.retryAfter = retryAfter
        self.poll = poll
        self.share = share
    }

    /// How long to rest after a compaction that took `took`: at least 10 ms.
    public func rest(after took: Duration) -> Duration {
        max(took * ((1 - share) / share), .milliseconds(10))
    }

    /// How long an account waits after its `failures`-th failed compaction in a row (at least 1):
    /// `retryAfter` doubled for every failure before it, 64 times `retryAfter` at most (about
    /// 2.7 days by default). A compaction that failed fails again until something changes (the
    /// code, the account's rows, the database's load): retried at once, it would take the
    /// maintenance tasks from every other account.
    public func retry(afterFailures failures: Int) -> Duration {
        retryAfter * (1 << min(max(failures, 1) - 1, 6))
    }

    /// `keepHistory` and `retryAfter` in seconds, as SQL's make_interval takes them.
    var keepSeconds: Double { keepHistory.inSeconds }
    var retrySeconds: Double { retryAfter.inSeconds }

    /// Reads a retention as `--keep-history` takes it: a number followed by `d`, `h`, `m` or `s`
    /// (`90d`, `12h`); `0` or `forever` keep everything (nil). Nil with an error for anything else.
    public static func keepHistory(parsing text: String) -> Result<Duration?, RetentionSyntaxError> {
        let text = text.trimmingCharacters(in: .whitespaces).lowercased()
        if text == "0" || text == "forever" { return .success(nil) }
        guard let unit = text.last, let seconds = ["d": 86_400, "h": 3_600, "m": 60, "s": 1][String(unit)],
              let count = Int64(text.dropLast()), count > 0, count <= Int64.max / Int64(seconds) / 1_000
        else { return .failure(RetentionSyntaxError(text: text)) }
        return .success(.seconds(count * Int64(seconds)))
    }
}

/// A `--keep-history` that is not `0`, `forever` or a positive number of days, hours, minutes or seconds.
public struct RetentionSyntaxError: Error, Hashable, CustomStringConvertible {
    public var text: String
    public var description: String {
        "'\(text)' is not a retention: give a number of days, hours, minutes or seconds (90d, 12h, 30m, 45s), or 0 or forever to keep everything"
    }
}

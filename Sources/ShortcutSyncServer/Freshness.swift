import CoreMetrics
import Foundation
import Synchronization

/// How fresh the views are where devices see them (issue 33), measured by this server: from a
/// push's commit to the poke a stream here delivers (`stream`), and to the first pull of another
/// device here that includes it (`pull`). Both go to `/metrics` as histograms and to `/readyz` as
/// p50 and p99 over the last five minutes. The commit's time is the pushing server's clock (it
/// rides in the change notification to the others), so across servers the figures include their
/// clocks' difference.
final class Freshness: Sendable {
    let stream = FreshnessWindow()
    let pull = FreshnessWindow()
    private let streamHistogram = Timer(label: "shortcut_sync_freshness_stream_seconds")
    private let pullHistogram = Timer(label: "shortcut_sync_freshness_pull_seconds")
    /// Each account's latest version announced with its commit's time, for the pulls: bounded,
    /// the oldest dropped first when it is full.
    private let commits = Mutex<[UUID: (version: Int64, committedAt: Int64)]>([:])
    static let accountsRemembered = 100_000

    /// A stream delivered a poke for changes whose earliest commit was at `committedAt`.
    func streamDelivered(committedAt: Int64, now: Int64) {
        let millis = max(0, now - committedAt)
        streamHistogram.recordNanoseconds(millis * 1_000_000)
        stream.record(millis, at: now)
    }

    /// The account's views changed up to `version`, committed at `committedAt`.
    func committed(account: UUID, version: Int64, committedAt: Int64) {
        commits.withLock { commits in
            if let known = commits[account], known.version >= version { return }
            if commits.count >= Self.accountsRemembered, commits[account] == nil {
                // Full: the older half goes (rare, and cheap once in so many).
                let cut = commits.values.map(\.committedAt).sorted()[commits.count / 2]
                commits = commits.filter { $0.value.committedAt > cut }
            }
            commits[account] = (version, committedAt)
        }
    }

    /// A device's complete pull took its view from `from` to `to`: if that includes the account's
    /// latest change this server heard of, how long after its commit.
    func pulled(account: UUID, from: Int64, to: Int64, now: Int64) {
        guard let latest = commits.withLock({ $0[account] }), from < latest.version, latest.version <= to else { return }
        let millis = max(0, now - latest.committedAt)
        pullHistogram.recordNanoseconds(millis * 1_000_000)
        pull.record(millis, at: now)
    }
}

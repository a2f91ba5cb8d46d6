import AsyncHTTPClient
import Foundation
import Histogram
import Logging
import NIOCore
import ShortcutSyncStore

/// One load account: its devices' tokens and what its pusher has had acknowledged, carried
/// from the sustained run into the 80 % run and the check of the views.
struct LoadAccount: Sendable {
    /// A batch of `SustainedBenchmark.batch` donations of one identifier.
    struct Batch: Sendable {
        var body: String
        var slot: Int
    }

    var pusher: String
    var reader: String
    var nextSeq: Int64 = 1
    var batches = 0
    /// Donations acknowledged per identifier `load-<slot>`.
    var acknowledged = [Int](repeating: 0, count: SustainedBenchmark.loadIdentifiers)
    /// The batch sent but not acknowledged: sent again unchanged (same ids and seqs), as a
    /// device's outbox does, so that if it was stored after all, nothing is stored twice.
    var pending: Batch?

    init(pusher: String, reader: String) {
        self.pusher = pusher
        self.reader = reader
    }

    func nextBatch() -> Batch {
        let slot = batches % SustainedBenchmark.loadIdentifiers
        return Batch(body: BenchEvents.pushBody(from: nextSeq, count: SustainedBenchmark.batch, identifier: "load-\(slot)"), slot: slot)
    }

    mutating func acknowledge(_ batch: Batch) {
        acknowledged[batch.slot] += SustainedBenchmark.batch
        nextSeq += Int64(SustainedBenchmark.batch)
        batches += 1
        pending = nil
    }
}

import AsyncHTTPClient
import Foundation
import Histogram
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import ShortcutSyncStore

/// The streams of a run: how many opened, and the latest version each sample reader was told
/// of, for the samples waiting on it. Waits end by a poke, or fail when `expireOverdue` (run by
/// the bench's ticker task) finds them past their deadline, or when the board closes.
actor StreamBoard {
    private struct Waiter {
        var version: Int64
        var deadline: ContinuousClock.Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private var openCount = 0
    private var versions: [Int: Int64] = [:]
    private var waiters: [Int: Waiter] = [:]
    private var closed = false

    func opened() { openCount += 1 }

    func changed(_ index: Int, version: Int64) {
        versions[index] = max(versions[index] ?? 0, version)
        if let waiter = waiters[index], version >= waiter.version {
            waiters[index] = nil
            waiter.continuation.resume()
        }
    }

    func waitForOpen(_ count: Int, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while openCount < count {
            guard ContinuousClock.now < deadline else { throw BenchError("only \(openCount) of \(count) streams opened within \(timeout)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Returns once stream `index` has announced `version` or a later one.
    func waitForVersion(_ index: Int, atLeast version: Int64, timeout: Duration) async throws {
        if (versions[index] ?? 0) >= version { return }
        if closed || Task.isCancelled { throw CancellationError() }
        try await withCheckedThrowingContinuation { continuation in
            waiters[index] = Waiter(version: version, deadline: .now + timeout, continuation: continuation)
        }
    }

    /// Fails the waits past their deadlines.
    func expireOverdue() {
        let now = ContinuousClock.now
        for (index, waiter) in waiters where waiter.deadline <= now {
            waiters[index] = nil
            waiter.continuation.resume(throwing: BenchError(
                "a sample reader's stream did not announce version \(waiter.version) in time (it last announced \(versions[index] ?? 0))"))
        }
    }

    /// Fails every wait, now and later: the run is over or cancelled.
    func close() {
        closed = true
        for waiter in waiters.values { waiter.continuation.resume(throwing: CancellationError()) }
        waiters = [:]
    }
}

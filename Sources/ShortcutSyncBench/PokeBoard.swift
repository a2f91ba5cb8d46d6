import AsyncHTTPClient
import Foundation
import Histogram
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import ShortcutSyncStore

/// Who has opened their stream and how many pokes each got.
actor PokeBoard {
    private var open: Set<Int> = []
    private var pokes: [Int: Int] = [:]

    private var failures: [String] = []

    func opened(_ index: Int) { open.insert(index) }
    func failed(_ error: any Error) { failures.append("\(error)") }
    func poked(_ index: Int, times: Int) { pokes[index, default: 0] += times }
    func count(_ index: Int) -> Int { pokes[index] ?? 0 }

    func waitForOpen(_ count: Int, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while open.count < count {
            if let first = failures.first { throw BenchError("\(failures.count) stream(s) could not be opened; the first: \(first)") }
            guard ContinuousClock.now < deadline else { throw BenchError("only \(open.count) of \(count) streams opened") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func waitForPoke(_ index: Int, after seen: Int, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while count(index) <= seen {
            guard ContinuousClock.now < deadline else { throw BenchError("device \(index) was not poked within \(timeout)") }
            try await Task.sleep(for: .microseconds(200))
        }
    }
}

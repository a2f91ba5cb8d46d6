import Foundation
import ShortcutSyncStore
import Synchronization

/// How long the disk under the database takes to make a small write durable, sampled all through
/// a run: a thread of its own writes 4 KB to a file in `directory` and waits for `fdatasync`,
/// every `period` (`FlushProbe.period` unless given).
///
/// A commit waits for its WAL to reach the disk the same way. When a virtual machine's disk
/// stalls a flush for a tenth of a second, every push committing then waits as long, whatever
/// the service does: `bench runaway` measured calm pushes all finishing at the same instant as
/// this probe's 148 ms flush. Reported beside each round, the probe tells such a round from one
/// slowed by the load being measured.
///
/// The probe's thread blocks in the system call, so it is a thread of its own and not a task:
/// it takes none of the cooperative pool's threads, which the load generator runs on.
final class FlushProbe: Sendable {
    /// What the probe saw in one window (`take()`).
    struct Window: Sendable, Hashable, Codable {
        /// The longest flush, in milliseconds (0 if none was timed).
        var longestMilliseconds: Double
        /// Flushes that took longer than `FlushProbe.stall`.
        var stalls: Int
        var flushes: Int
    }

    /// A flush this long is a stall: on the machines these benchmarks ran on, 20 ms is ten times
    /// a flush's longest in most seconds, and three to four times the calm accounts' push p99
    /// in `bench runaway`, so that such a stall decides a round's p99.
    static let stall: Duration = .milliseconds(20)

    /// A flush every 50 ms: any stall of the disk that lasts longer is timed, and most of those
    /// over 20 ms; the probe adds 20 small flushes a second to the hundreds the database makes.
    static let period: Duration = .milliseconds(50)

    /// The bytes written before each flush.
    static let pageBytes = 4096

    /// `stall` and `period` in whole milliseconds, as the benches' tables print them.
    static var stallMilliseconds: Int { Int(stall.inSeconds * 1000) }
    static var periodMilliseconds: Int { Int(period.inSeconds * 1000) }

    /// What the probe does, as the benches' tables say it.
    static var what: String { "a \(pageBytes / 1024) KB write flushed every \(periodMilliseconds) ms" }

    private struct State {
        var window = Window(longestMilliseconds: 0, stalls: 0, flushes: 0)
        var stopping = false
        var failure: String?
    }

    private let state = Mutex(State())
    private let finished = DispatchSemaphore(value: 0)
    let file: URL

    /// Starts probing at once. The file is made in `directory` (which must exist) and removed by `stop()`.
    init(directory: URL, period: Duration = FlushProbe.period) throws {
        file = directory.appendingPathComponent("shortcut-sync-flush-probe")
        let descriptor = open(file.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw BenchError("cannot write the flush probe's file \(file.path): errno \(errno)") }
        let thread = Thread { [self] in
            defer { close(descriptor); self.finished.signal() }
            let page = [UInt8](repeating: 0x5A, count: Self.pageBytes)
            let clock = ContinuousClock()
            while !self.state.withLock({ $0.stopping }) {
                let started = clock.now
                let written = page.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
                guard written == page.count, fdatasync(descriptor) == 0 else {
                    let code = errno
                    self.state.withLock { $0.failure = "the flush probe's write failed: errno \(code)" }
                    return
                }
                let took = clock.now - started
                self.state.withLock {
                    $0.window.flushes += 1
                    $0.window.longestMilliseconds = max($0.window.longestMilliseconds, took.inSeconds * 1000)
                    if took > Self.stall { $0.window.stalls += 1 }
                }
                Thread.sleep(forTimeInterval: max(0, (period - took).inSeconds))
            }
        }
        thread.name = "flush-probe"
        thread.start()
    }

    /// What was seen since the probe started or since the last call, and a new window begun.
    func take() -> Window {
        state.withLock { state in
            defer { state.window = Window(longestMilliseconds: 0, stalls: 0, flushes: 0) }
            return state.window
        }
    }

    /// Why the probe stopped before it was asked to, if it did.
    var failure: String? { state.withLock { $0.failure } }

    /// Ends the probe's thread, waits for it (at most one flush and one period), and removes its
    /// file. Called once (`with` does): the thread's end is signalled once.
    func stop() async {
        state.withLock { $0.stopping = true }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async { [finished] in
                finished.wait()
                done.resume()
            }
        }
        try? FileManager.default.removeItem(at: file)
    }

    /// Runs `body` with a probe in `directory`, or with none if `directory` is nil; the probe is
    /// stopped afterwards, also when `body` throws.
    static func with<Result: Sendable>(directory: URL?, _ body: (FlushProbe?) async throws -> Result) async throws -> Result {
        guard let directory else { return try await body(nil) }
        let probe = try FlushProbe(directory: directory)
        do {
            let result = try await body(probe)
            await probe.stop()
            return result
        } catch {
            await probe.stop()
            throw error
        }
    }
}

import Foundation
import NIOCore
import NIOPosix
@testable import ShortcutSyncStore
import Synchronization
import Testing

/// The heartbeat's deadline counts only time its event loop was awake to see (a two-core test
/// machine once took a starved process's late timer for a silent database, and answered
/// requests 503 for seconds).
@Suite struct SilenceTimerTests {
    /// A loop of its own: the test blocks it.
    static func withLoop(_ body: (any EventLoop) async throws -> Void) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            try await body(group.next())
        } catch {
            try await group.shutdownGracefully()
            throw error
        }
        try await group.shutdownGracefully()
    }

    @Test func aDeadlinePassedOnAnAwakeLoopIsSilence() async throws {
        try await Self.withLoop { loop in
            let heard = Atomic<Int>(0)
            let started = ContinuousClock.now
            let timer = SilenceTimer(on: loop, deadline: .milliseconds(200), starvation: .milliseconds(100)) {
                heard.add(1, ordering: .relaxed)
            }
            defer { timer.cancel() }
            while heard.load(ordering: .relaxed) == 0, ContinuousClock.now - started < .seconds(10) {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(heard.load(ordering: .relaxed) == 1)
            #expect(ContinuousClock.now - started >= .milliseconds(200))
        }
    }

    @Test func aDeadlineThatPassedWhileTheLoopWasHeldUpIsCountedAgain() async throws {
        try await Self.withLoop { loop in
            let heard = Atomic<Int>(0)
            let timer = SilenceTimer(on: loop, deadline: .milliseconds(200), starvation: .milliseconds(100)) {
                heard.add(1, ordering: .relaxed)
            }
            // The loop is held for 600 ms: its timer fires 400 ms late, and is armed for 200 ms more.
            loop.execute { Thread.sleep(forTimeInterval: 0.6) }
            try await loop.submit {}.get()  // the hold is over
            #expect(heard.load(ordering: .relaxed) == 0, "a late timer is not silence")
            timer.cancel()  // the answer came
            try await Task.sleep(for: .milliseconds(400))
            #expect(heard.load(ordering: .relaxed) == 0, "a cancelled timer stays quiet")
        }
    }

    @Test func aLoopHeldUpForGoodStillHearsSilence() async throws {
        try await Self.withLoop { loop in
            let heard = Atomic<Int>(0)
            let timer = SilenceTimer(on: loop, deadline: .milliseconds(50), starvation: .milliseconds(10)) {
                heard.add(1, ordering: .relaxed)
            }
            defer { timer.cancel() }
            // The loop is held 200 ms at a time, back to back: every firing is late, and after
            // `maximumRearms` of them the next counts all the same.
            let hold = loop.scheduleRepeatedTask(initialDelay: .zero, delay: .zero) { _ in Thread.sleep(forTimeInterval: 0.2) }
            let started = ContinuousClock.now
            while heard.load(ordering: .relaxed) == 0, ContinuousClock.now - started < .seconds(10) {
                try await Task.sleep(for: .milliseconds(10))
            }
            let promise = loop.makePromise(of: Void.self)
            hold.cancel(promise: promise)
            try await promise.futureResult.get()
            #expect(heard.load(ordering: .relaxed) == 1)
        }
    }
}

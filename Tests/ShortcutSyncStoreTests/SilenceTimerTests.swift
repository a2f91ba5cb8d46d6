import Foundation
import NIOCore
import NIOPosix
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
@testable import ShortcutSyncStore
import ShortcutSyncTestSupport
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

    /// The heartbeat's answer stops its timer where it arrives, on the connection's event loop:
    /// a source whose own tasks wait longer than the deadline for their thread (a process whose
    /// cores other work holds) does not take an answered heartbeat for silence. In CI a test
    /// server's heartbeat, answered in milliseconds, was taken for silence all the same when the
    /// timer was stopped only once the heartbeat's task ran again, and requests were answered 503.
    @Test func anAnsweredHeartbeatIsNotSilenceWhileTheSourcesTasksWaitForTheirThread() async throws {
        try await TestDatabase.withClient { client, url in
            let seen = SeenEvents()
            func lastHeartbeat() async throws -> Date? {
                try await client.query(PostgresQuery(unsafeSQL: """
                    SELECT max(query_start) FROM pg_stat_activity
                    WHERE datname = current_database() AND query = 'SELECT ''listening'' AS heartbeat'
                    """)).decode(Date?.self).collectAll().first ?? nil
            }
            try await Self.withLoop { held in
                // The source's tasks run on the one thread of `held` between their statements.
                let source = NotificationSource(.dedicated(try url.connectionConfiguration()), channels: [.projection],
                                                logger: TestDatabase.shared.logger, tasksExecutor: EventLoopTaskExecutor(held))
                try await source.withEvents { events in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask { for await event in events { seen.append(event) } }
                        try await eventually("the source has asked its first heartbeat", timeout: .seconds(60)) {
                            try await lastHeartbeat() != nil
                        }
                        let before = try #require(try await lastHeartbeat())
                        // The thread is held 1.5 s at a time, back to back: a heartbeat asked
                        // between two holds is answered during the next, and its task runs
                        // again only after it, past the 1 s deadline.
                        let hold = held.scheduleRepeatedTask(initialDelay: .zero, delay: .zero) { _ in Thread.sleep(forTimeInterval: 1.5) }
                        try await Task.sleep(for: .seconds(5))
                        let released = held.makePromise(of: Void.self)
                        hold.cancel(promise: released)
                        try await released.futureResult.get()
                        let after = try #require(try await lastHeartbeat())
                        #expect(after > before, "heartbeats were asked while the thread was held")
                        try await Task.sleep(for: .milliseconds(300))
                        group.cancelAll()
                    }
                }
            }
            #expect(!seen.all.contains(.silent), "\(seen.all)")
            #expect(afterFirstListening(seen.all) == [], "the first connection lasted")
        }
    }
}

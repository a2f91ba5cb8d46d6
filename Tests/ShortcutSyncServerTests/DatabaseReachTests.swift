import ShortcutSyncServer
@testable import ShortcutSyncStore
import ShortcutSyncTestSupport
import Synchronization
import Testing

/// `DatabaseReach` alone: what a request that needs the database meets when it goes.
@Suite struct DatabaseReachTests {
    @Test func anOperationWaitingWhenTheDatabaseGoesIsCancelledAndAnsweredAway() async throws {
        let reach = DatabaseReach()
        let started = AsyncStream<Void>.makeStream()
        let waiting = Task {
            try await reach.whileReachable {
                started.continuation.yield()
                // A wait that ends only when cancelled, as a pool's lease does while the database is down.
                try await Task.sleep(for: .seconds(3600))
                return "served"
            }
        }
        var iterator = started.stream.makeAsyncIterator()
        await iterator.next()
        reach.becameUnreachable()
        let outcome = try await within(.seconds(10), "the waiting operation to end") { await waiting.result }
        #expect(throws: DatabaseAway.self) { try outcome.get() }
    }

    /// Where statements are routed by account, each operation runs with a `NodeOutageWatch`, and
    /// the loss of a worker it was routed to ends it as the database's going does; elsewhere an
    /// operation runs with none.
    @Test func aWatchedOperationEndsWhenItsWorkerIsLost() async throws {
        #expect(try await DatabaseReach().whileReachable { NodeOutageWatch.current == nil })
        let reach = DatabaseReach(watchesNodes: true)
        let watches = AsyncStream<NodeOutageWatch?>.makeStream()
        let waiting = Task {
            try await reach.whileReachable {
                watches.continuation.yield(NodeOutageWatch.current)
                try await Task.sleep(for: .seconds(3600))
                return "served"
            }
        }
        var iterator = watches.stream.makeAsyncIterator()
        let watch = try #require(await iterator.next() ?? nil, "the operation runs with a watch")
        watch.outage()
        let outcome = try await within(.seconds(10), "the watched operation to end") { await waiting.result }
        #expect(throws: DatabaseAway.self) { try outcome.get() }
    }

    @Test func whileTheDatabaseIsAwayNothingRunsAndOnceBackAllDoes() async throws {
        let reach = DatabaseReach()
        reach.becameUnreachable()
        let ran = Counter()
        await #expect(throws: DatabaseAway.self) { try await reach.whileReachable { ran.increment() } }
        #expect(ran.value == 0)
        reach.becameReachable()
        try await reach.whileReachable { ran.increment() }
        #expect(ran.value == 1)
    }

    /// A push that committed as the database went is acknowledged, not refused: its device
    /// would send it again all the same, but an answer that says "stored" is the truth.
    @Test func anOperationThatSucceedsDespiteTheOutageKeepsItsResult() async throws {
        let reach = DatabaseReach()
        let started = AsyncStream<Void>.makeStream()
        let committing = Task {
            try await reach.whileReachable {
                started.continuation.yield()
                // Not cancellable, like a statement in flight: it finishes anyway.
                try? await Task.sleep(for: .milliseconds(200))
                return 42
            }
        }
        var iterator = started.stream.makeAsyncIterator()
        await iterator.next()
        reach.becameUnreachable()
        #expect(try await committing.value == 42)
    }
}

/// How many times an operation ran.
private final class Counter: Sendable {
    private let count = Atomic<Int>(0)

    var value: Int { count.load(ordering: .relaxed) }

    func increment() {
        count.add(1, ordering: .relaxed)
    }
}

import Foundation
import Logging
@testable import ShortcutSyncServer
import ShortcutSyncStore
import Synchronization
import ShortcutSyncTestSupport
import Testing

/// Events given by a test, as a node's `LISTEN` would give them.
final class GivenEvents: NotificationEvents {
    let stream: NotificationSource.Events
    let continuation: NotificationSource.Events.Continuation

    init() { (stream, continuation) = NotificationSource.Events.makeStream() }

    func withEvents<Result>(_ body: (NotificationSource.Events) async throws -> Result) async throws -> Result {
        try await body(stream)
    }
}

/// When each poke came.
final class PokeTimes: Sendable {
    private let times = Mutex<[ContinuousClock.Instant]>([])
    var all: [ContinuousClock.Instant] { times.withLock { $0 } }
    func record() { times.withLock { $0.append(.now) } }
}

/// Issue 65, item 9: when a `LISTEN` comes back (on a cluster, any node's), every subscriber is
/// poked once, spread over `resumePokeSpread` rather than all at once, and a second resume
/// while that poke is under way adds none: a node that flaps does not bring every device's pull
/// of every server at the same moment.
@Suite struct ResumePokeSpreadTests {
    @Test func aResumedListenPokesEveryoneOnceSpreadOut() async throws {
        let events = GivenEvents()
        let hub = NotificationHub(notifications: events, logger: .init(label: "test"), keepAliveInterval: .seconds(3600),
                                  signedIn: { Set($0.map(\.device)) }, resumePokeSpread: .seconds(1))
        let running = Task { try await hub.run() }
        defer { running.cancel() }
        events.continuation.yield(.connected)
        events.continuation.yield(.listening(resumed: false))
        let mailboxes = (0..<20).map { _ in hub.subscribe(account: UUID(), device: UUID()) }
        let arrivals = PokeTimes()
        let readers = mailboxes.map { mailbox in
            Task {
                for await message in mailbox where message == .changed(version: 0) {
                    arrivals.record()
                }
            }
        }
        events.continuation.yield(.listening(resumed: true))
        try await Task.sleep(for: .milliseconds(300))
        events.continuation.yield(.listening(resumed: true))  // while the first is spread: no second poke
        // Waited for, not timed: on a loaded machine the pokes come late, never early.
        try await eventually("every subscriber is poked: \(arrivals.all.count) pokes", timeout: .seconds(30)) { arrivals.all.count >= 20 }
        try await Task.sleep(for: .milliseconds(1_500))  // a second poke, had there been one, would have begun by now
        let times = arrivals.all.sorted()
        #expect(times.count == 20, "each subscriber poked once: \(times.count) pokes")
        let first = try #require(times.first), last = try #require(times.last)
        #expect(times[1] - first < .milliseconds(100), "the first tenth at once: \(times[1] - first)")
        #expect(last - first >= .milliseconds(800), "spread over the second: \(last - first)")
        for mailbox in mailboxes { mailbox.finish() }
        for reader in readers { await reader.value }
    }
}

import Foundation
@testable import ShortcutSyncServer
import ShortcutSyncTestSupport
import Synchronization
import Testing

/// Pushes of one account take turns in the order they came; other accounts' pushes do not wait.
@Suite struct AccountTurnsTests {
    /// A push that runs until it is let go.
    final class Held: Sendable {
        private let release: AsyncStream<Void>.Continuation
        private let released: AsyncStream<Void>

        init() {
            (released, release) = AsyncStream.makeStream()
        }

        func wait() async {
            for await _ in released { return }
        }

        func letGo() {
            release.yield()
            release.finish()
        }
    }

    /// What the pushes did: how many ran at once, at most, and in which order they started.
    final class Log: Sendable {
        let state = Mutex<(running: Int, most: Int, order: [Int])>((0, 0, []))

        func push(_ number: Int, account: UUID, turns: AccountTurns, holding held: Held? = nil) async throws {
            try await turns.run(account) {
                state.withLock { $0.running += 1; $0.most = max($0.most, $0.running); $0.order.append(number) }
                if let held { await held.wait() }
                await Task.yield()
                state.withLock { $0.running -= 1 }
            }
        }
    }

    @Test func pushesOfOneAccountNeverOverlapAndGoInTheOrderTheyCame() async throws {
        let turns = AccountTurns()
        let account = UUID()
        let first = Held()
        let log = Log()
        let pushes = 20
        try await withThrowingTaskGroup(of: Void.self) { group in
            // Whatever fails below, the first push ends, and the others after it.
            defer { first.letGo() }
            group.addTask { try await log.push(0, account: account, turns: turns, holding: first) }
            try await eventually("the first push to start", timeout: .seconds(10)) { log.state.withLock { !$0.order.isEmpty } }
            for number in 1..<pushes {
                group.addTask { try await log.push(number, account: account, turns: turns) }
                // Each comes once the one before it waits: the order they came is known.
                try await eventually("push \(number) to wait its turn", timeout: .seconds(10)) { turns.waiting(account) == number }
            }
            #expect(log.state.withLock { $0.order } == [0], "none ran beside the first")
            first.letGo()
            try await eventually("every push to end", timeout: .seconds(10)) {
                log.state.withLock { $0.order.count == pushes && $0.running == 0 }
            }
            try await group.waitForAll()
        }
        let (running, most, order) = log.state.withLock { $0 }
        #expect(running == 0)
        #expect(most == 1, "two pushes of one account ran at once")
        #expect(order == Array(0..<pushes))
        #expect(turns.accountsRunning == 0, "an account's line was left behind")
    }

    @Test func pushesOfOtherAccountsDoNotWait() async throws {
        let turns = AccountTurns()
        let held = Held()
        let log = Log()
        // Whatever fails below, the held push ends, and anything waiting for it.
        defer { held.letGo() }
        let holding = Task { try await log.push(0, account: UUID(), turns: turns, holding: held) }
        try await eventually("the first account's push to start", timeout: .seconds(10)) { log.state.withLock { !$0.order.isEmpty } }
        let beside = Task { try await log.push(1, account: UUID(), turns: turns) }
        try await eventually("another account's push to run beside it", timeout: .seconds(10)) {
            log.state.withLock { $0.order == [0, 1] && $0.running == 1 }
        }
        try await beside.value
        #expect(turns.accountsRunning == 1)
        held.letGo()
        try await holding.value
        #expect(turns.accountsRunning == 0)
    }

    struct Refused: Error {}

    @Test func aPushThatFailsHandsOnItsTurn() async throws {
        let turns = AccountTurns()
        let account = UUID()
        await #expect(throws: Refused.self) { try await turns.run(account) { throw Refused() } }
        // Asked before the next push, which would wait for a turn never handed on.
        try #require(turns.accountsRunning == 0, "the failed push kept its account's turn")
        #expect(try await turns.run(account) { "ran" } == "ran")
        #expect(turns.accountsRunning == 0)
    }
}

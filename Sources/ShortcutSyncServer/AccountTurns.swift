import Foundation
import Synchronization

/// The pushes of one account that this server runs against the database take turns, in the
/// order they came; pushes of other accounts do not wait for them.
///
/// Two pushes of one account at once cannot both go the optimistic way (DESIGN §6): the second
/// finds the head moved by the first, and its read, its fold and its write were done for nothing
/// before it goes the locking way, which waits for the first on the head's row anyway. With
/// four devices of one account pushing 100-event batches back to back, that cost the service
/// more than twice the CPU of an event of four accounts (`bench push --scenario
/// batches-one-account`). Taking turns here, a push reads the head only once the one before it
/// wrote. Pushes of one account to other servers still meet on the head row, as before. A push
/// waits at most for the account's pushes under way (`PushesInFlight`, four by default), and
/// takes its turn after its place among the pushes running (`PushGate`): it keeps that place while
/// it waits, so that its wait is for pushes already running, never for a place again after them.
final class AccountTurns: Sendable {
    /// For each account whose push is running, the pushes waiting for their turn, in order.
    private let lines = Mutex<[UUID: [CheckedContinuation<Void, Never>]]>([:])

    /// Runs `push` once no other push of `account` (through this) is running.
    func run<Result: Sendable>(_ account: UUID, _ push: () async throws -> Result) async throws -> Result {
        await take(account)
        defer { pass(account) }
        return try await push()
    }

    /// How many accounts have a push running (for the tests: none once every push ended).
    var accountsRunning: Int {
        lines.withLock { $0.count }
    }

    /// How many pushes of `account` wait for their turn (for the tests).
    func waiting(_ account: UUID) -> Int {
        lines.withLock { $0[account]?.count ?? 0 }
    }

    /// Takes the account's turn: at once when no push of it runs (no continuation made), else in
    /// the order it came.
    private func take(_ account: UUID) async {
        if claim(account, orQueue: nil) { return }
        await withCheckedContinuation { continuation in
            if claim(account, orQueue: continuation) { continuation.resume() }
        }
    }

    /// True when no push of `account` was running: the turn is this one's. Else `continuation`,
    /// if any, waits in the account's line.
    private func claim(_ account: UUID, orQueue continuation: CheckedContinuation<Void, Never>?) -> Bool {
        lines.withLock { lines in
            guard lines[account] != nil else {
                lines[account] = []
                return true
            }
            if let continuation { lines[account]!.append(continuation) }
            return false
        }
    }

    /// The turn passes to the first push waiting, if any; else the account has none running.
    private func pass(_ account: UUID) {
        let next = lines.withLock { lines -> CheckedContinuation<Void, Never>? in
            guard var waiting = lines[account], !waiting.isEmpty else {
                lines[account] = nil
                return nil
            }
            let next = waiting.removeFirst()
            lines[account] = waiting
            return next
        }
        next?.resume()
    }
}

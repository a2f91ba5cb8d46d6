import CoreMetrics
import Foundation
import Logging
import ShortcutSyncAPI
import ShortcutSyncDomain
import ShortcutSyncStore

extension SyncAPI {
    /// The longest a pull may wait for `waitFor`, and how long it waits when no timeout is given.
    static let maximumWait = 30_000
    static let defaultWait = 10_000

    func pull(_ input: Operations.Pull.Input) async throws -> Operations.Pull.Output {
        let (device, account) = try await requireDevice()
        if let position = input.query.waitFor {
            guard input.query.timeout.map({ $0 >= 0 }) ?? true else {
                throw APIProblem.invalid([FieldError(pointer: "/timeout", detail: "must not be negative")])
            }
            let timeout = min(Int(input.query.timeout ?? Int32(Self.defaultWait)), Self.maximumWait)
            try await waitUntilProcessed(position, account: account, timeout: .milliseconds(timeout))
        }
        let snapshot = try await projections.pull(account: account, device: device, cursor: input.query.cursor)
        ServerMetrics.pulls.increment()
        let body = PullBody(
            cursor: snapshot.cursor, reset: snapshot.reset, lastAcceptedSeq: snapshot.lastAcceptedSeq, hlc: snapshot.maxHLC,
            shortcuts: .init(upserted: snapshot.changes.upsertedShortcuts, removed: snapshot.changes.removedShortcuts),
            voiceShortcuts: .init(upserted: snapshot.changes.upsertedVoiceShortcuts, removed: snapshot.changes.removedVoiceShortcuts))
        return .ok(.init(body: .json(try WireFormat.convert(body, to: Components.Schemas.PullResponse.self))))
    }

    /// Read-your-writes: returns once the projections include log `position`, or when `timeout` is over.
    /// Woken by the worker's notifications for the account; it also looks again every 100 ms, since
    /// a notification is only a hint.
    func waitUntilProcessed(_ position: Int64, account: UUID, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await !projections.isProcessed(position: position) {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return }
            await hub.waitForChange(account: account, timeout: min(remaining, .milliseconds(100)))
        }
    }
}

/// The pull answer of DESIGN §5 in the domain's types; its JSON is `PullResponse`'s.
struct PullBody: Encodable {
    struct Changes<View: Encodable, Key: Encodable>: Encodable {
        var upserted: [View]
        var removed: [Key]
    }

    var cursor: String
    var reset: Bool
    var lastAcceptedSeq: Int64
    var hlc: HLCTimestamp
    var shortcuts: Changes<ShortcutView, ShortcutID>
    var voiceShortcuts: Changes<VoiceShortcutView, UUID>
}

import CoreMetrics
import Foundation
import Logging
import ServiceLifecycle
import ShortcutSyncAPI
import ShortcutSyncDomain
import ShortcutSyncStore

extension SyncAPI {
    /// The longest a pull may wait for `waitFor`, and how long it waits when no timeout is given.
    static let maximumWait = 30_000
    static let defaultWait = 10_000

    func pull(_ input: Operations.Pull.Input) async throws -> Operations.Pull.Output {
        let (device, account) = try requireDeviceRead()
        var invalid: [FieldError] = []
        if let waitFor = input.query.waitFor, !(0...Limits.seqRange.upperBound).contains(waitFor) {
            invalid.append(FieldError(pointer: "/waitFor", detail: "must be 0 to \(Limits.seqRange.upperBound)"))
        }
        if let timeout = input.query.timeout, timeout < 0 {
            invalid.append(FieldError(pointer: "/timeout", detail: "must not be negative"))
        }
        guard invalid.isEmpty else { throw APIProblem.invalid(invalid) }
        if let version = input.query.waitFor {
            let timeout = min(Int(input.query.timeout ?? Int32(Self.defaultWait)), Self.maximumWait)
            try await waitUntilIncluded(version, account: account, device: device, timeout: .milliseconds(timeout))
            // The wait ends early when the device is signed out or its account erased, and then
            // it gets no view: its token no longer holds.
            guard try await accounts.isSignedIn(device: device, account: account) else { throw APIProblem.unauthorized }
        }
        let codec = try await cursors.codec { try await accounts.cursorSigningKey() }
        let cursor = input.query.cursor.flatMap(codec.cursor)
        let snapshot = try await projections.pull(account: account, device: device, cursor: cursor)
        // The device has this version now: no wake for it (DESIGN §6), and, after the last page,
        // the others can see that it has it (`GET /v1/devices`), and how long after its commit
        // the account's latest change reached a device (`Freshness`).
        try await deviceSync.recordPull(device: device, account: account, version: snapshot.cursor.version, complete: !snapshot.more)
        if !snapshot.more { hub.freshness.pulled(account: account, from: cursor?.version ?? 0, to: snapshot.cursor.version, now: now()) }
        ServerMetrics.pulls.increment()
        return .ok(.init(body: .json(.init(
            cursor: codec.text(snapshot.cursor), reset: snapshot.reset, more: snapshot.more,
            lastAcceptedSeq: snapshot.lastAcceptedSeq, hlc: snapshot.maxHLC,
            shortcuts: .init(upserted: snapshot.changes.upsertedShortcuts, removed: snapshot.changes.removedShortcuts),
            voiceShortcuts: .init(upserted: snapshot.changes.upsertedVoiceShortcuts, removed: snapshot.changes.removedVoiceShortcuts)))))
    }

    /// Read-your-writes: returns once the account's views include its `version`, when
    /// `timeout` is over, or when the service begins to shut down (the pull then answers with
    /// what there is). It subscribes to the account's changes before it first looks, so a change
    /// between the look and the wait is not missed; each change (a hint) makes it look again.
    /// It also returns as soon as the device is signed out or its account erased.
    ///
    /// A `version` past the account's next one is refused (422): it could only be waited for in
    /// vain. Each poke says the version the views include, so a waiting pull looks again only
    /// when a poke says nothing of it (after LISTEN resumed: version 0); keep-alives and pokes of
    /// earlier versions cost no query, however many pulls wait.
    func waitUntilIncluded(_ version: Int64, account: UUID, device: UUID, timeout: Duration) async throws {
        guard version > 0 else { return }
        let changes = hub.subscribe(account: account, device: device, isStream: false)
        let head = try await projections.head(account: account)
        guard version <= head.version + 1 else {
            throw APIProblem.invalid([FieldError(pointer: "/waitFor", detail: "must be at most \(head.version + 1), the account's next version")])
        }
        guard head.folded < version else { return }
        let deadline = ContinuousClock.now + timeout
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [projections] in
                for await message in changes {
                    guard case .changed(let changed, _, _) = message else { continue }
                    if changed >= version { return }
                    if changed == 0, try await projections.includes(version: version, account: account) { return }
                }
            }
            group.addTask { try? await Task.sleep(until: deadline) }
            group.addTask { try? await gracefulShutdown() }
            try await group.next()
            group.cancelAll()
        }
    }
}

import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncWorker

/// What the operators' commands do (`shortcut-sync admin …`, DESIGN §7), against one database;
/// each returns a report the command line prints as a table or as JSON.
public struct Operator: Sendable {
    public let client: PostgresClient
    public let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    var store: OperatorStore { OperatorStore(client: client, logger: logger) }

    public func accounts() async throws -> AccountsReport {
        AccountsReport(accounts: try await store.accounts().map {
            .init(accountId: $0.accountId, createdAt: $0.createdAt, devices: $0.devices, events: $0.events, lastEventAt: $0.lastEventAt)
        })
    }

    public func devices(account: UUID) async throws -> DevicesReport {
        try await requireAccount(account)
        return DevicesReport(accountId: account, devices: try await store.devices(account: account).map {
            .init(deviceId: $0.device.deviceId, name: $0.device.name, platform: $0.device.platform, createdAt: $0.device.createdAt,
                  revokedAt: $0.device.revokedAt, events: $0.events, lastAcceptedSeq: $0.lastAcceptedSeq, lastEventAt: $0.lastEventAt,
                  installedApps: $0.installedApps?.sorted())
        })
    }

    /// The account's voice shortcuts as the live projections hold them; with `conflictsOnly`,
    /// those waiting for another phrase.
    public func voiceShortcuts(account: UUID, conflictsOnly: Bool) async throws -> VoiceShortcutsReport {
        try await requireAccount(account)
        let view = try await ProjectionStore(client: client, logger: logger).accountView(account: account)
        let voices = view.voiceShortcuts.values
            .filter { !conflictsOnly || $0.status == .phraseConflict }
            .sorted { ($0.phrase, $0.voiceShortcutId.uuidString) < ($1.phrase, $1.voiceShortcutId.uuidString) }
        return VoiceShortcutsReport(accountId: account, voiceShortcuts: voices)
    }

    /// The view of one device: now, from the live projections (as its next full pull answers,
    /// every page of it), or as it was at a prefix of the log, replayed from the log with the
    /// domain's fold.
    public func shortcuts(device: UUID, prefix: LogPrefix = .all) async throws -> ShortcutsReport {
        guard let account = try await store.account(ofDevice: device) else {
            throw AdminUsageError("there is no device \(device.lowercased); `shortcut-sync admin devices --account A` lists an account's devices")
        }
        switch prefix {
        case .all:
            // A pull answers a page at a time; the report is the whole view, all its pages applied.
            let view = try await ProjectionStore(client: client, logger: logger).deviceView(account: account, device: device)
            return ShortcutsReport(accountId: account, deviceId: device, source: "projections", view: view)
        case .throughPosition(let position):
            let log = try await store.accountLog(account, prefix)
            return ShortcutsReport(accountId: account, deviceId: device, source: "replay", atPosition: position, eventsReplayed: log.count,
                                   view: AccountState(folding: log.map(\.accepted)).view(forDevice: device))
        case .recordedBy(let time):
            let log = try await store.accountLog(account, prefix)
            return ShortcutsReport(accountId: account, deviceId: device, source: "replay", asOf: time, eventsReplayed: log.count,
                                   view: AccountState(folding: log.map(\.accepted)).view(forDevice: device))
        }
    }

    /// At most `limit` of the filter's events in log order; the page says whether more follow,
    /// and from which position (`--after`) to ask for them.
    public func events(_ filter: EventFilter, limit: Int) async throws -> EventsReport {
        try await requireAccount(filter.account)
        // One event beyond the page tells whether more follow.
        let events = try await store.events(filter, limit: min(limit, Int.max - 1) + 1)
        let page = events.prefix(limit)
        let more = events.count > limit
        return EventsReport(events: page.map(EventRow.init), more: more, nextAfter: more ? page.last?.position : nil)
    }

    /// Hands the filter's events to `deliver` as they commit, in log order, until cancelled:
    /// from the filter's `afterPosition` if it has one, else from what commits next. It reads again when
    /// the worker notifies a change of the account, and at least every `pollInterval` (events
    /// are readable once committed, before any worker folds them).
    public func follow(
        _ filter: EventFilter, pollInterval: Duration = .seconds(1),
        deliver: @escaping @Sendable ([EventRow]) async throws -> Void
    ) async throws {
        try await requireAccount(filter.account)
        let start = filter.afterPosition != nil ? LogCheckpoint.start : try await store.horizonCheckpoint()
        let (wakes, waker) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                let source = NotificationSource(.leased(from: client), channels: [.projection], logger: logger)
                try await source.withEvents { events in
                    for await event in events {
                        switch event {
                        case .projection(let notification) where notification.accountId == filter.account: waker.yield()
                        // What was notified while the connection was down is lost: read again.
                        case .listening(resumed: true): waker.yield()
                        default: break
                        }
                    }
                }
            }
            group.addTask {
                while true {
                    try await Task.sleep(for: pollInterval)
                    waker.yield()
                }
            }
            group.addTask {
                var checkpoint = start
                for await _ in wakes {
                    while true {
                        let page = try await store.committedEvents(filter, after: checkpoint, limit: 1000)
                        guard let last = page.last else { break }
                        checkpoint = last.checkpoint
                        try await deliver(page.map(EventRow.init))
                    }
                }
            }
            waker.yield()
            try await group.next()
            group.cancelAll()
        }
    }

    /// Every event of the account that touched the shortcut or its voice shortcuts, in log
    /// order, with what it did (`ShortcutHistory`).
    public func history(account: UUID, shortcut: ShortcutID) async throws -> HistoryReport {
        try await requireAccount(account)
        let log = try await store.accountLog(account, .all)
        let entries = ShortcutHistory(shortcut: shortcut).entries(of: log.map(\.accepted)).map { entry in
            let event = log[entry.index]
            return HistoryReport.Entry(position: event.position, recordedAt: event.recordedAt, deviceId: event.deviceId, type: event.event.type,
                                       effects: entry.effects.map { .init(kind: $0.kind, description: $0.description) })
        }
        return HistoryReport(accountId: account, shortcut: shortcut.description, entries: entries)
    }

    public func status() async throws -> StatusReport {
        StatusReport(try await store.projectionStatus())
    }

    /// Replays the log beside the live projections and swaps them in (DESIGN §6), while the
    /// service and its worker go on; `progress` hears how far it came out of how many events.
    public func rebuild(progress: @escaping @Sendable (_ processed: Int, _ total: Int) async -> Void) async throws -> RebuildReport {
        let started = ContinuousClock.now
        let total = try await store.eventCount()
        let rebuilder = ProjectionRebuilder(client: client, logger: logger)
        let checkpoint = try await rebuilder.rebuild { await progress($0.processed, max(total, $0.processed)) }
        try await rebuilder.promote()
        let live = try await ProjectionStore(client: client, logger: logger).checkpoint()
        return RebuildReport(eventsReplayed: try await store.eventCount(), checkpointPosition: max(live.log.position, checkpoint.position),
                             seconds: (ContinuousClock.now - started).inSeconds)
    }

    /// Replays the log and compares the result with the live projections row for row.
    public func verify(progress: @escaping @Sendable (_ processed: Int, _ total: Int) async -> Void) async throws -> VerifyReport {
        let total = try await store.eventCount()
        let rebuilder = ProjectionRebuilder(client: client, logger: logger)
        return VerifyReport(try await rebuilder.verify { await progress($0.processed, max(total, $0.processed)) })
    }

    /// The account as export lines (`AccountArchive`).
    public func export(account: UUID) async throws -> [String] {
        guard let record = try await store.accountRecord(account) else { throw noAccount(account) }
        return try AccountArchive.lines(account: record, devices: try await store.archivedDevices(account: account),
                                        events: try await store.accountLog(account, .all))
    }

    /// Stores what an export holds that the database lacks, all or nothing.
    public func importAccount(_ contents: AccountArchive.Contents) async throws -> ImportReport {
        let counts = try await store.importAccount(contents.account, devices: contents.devices, events: contents.events)
        return ImportReport(accountId: contents.account.accountId, accountsAdded: counts.accounts, devicesAdded: counts.devices,
                            eventsAdded: counts.events, eventsAlreadyStored: counts.eventsAlreadyStored)
    }

    public func erase(account: UUID) async throws -> EraseReport {
        try await requireAccount(account)
        let counts = try await store.erase(account: account)
        return EraseReport(accountId: account, events: counts.events, projectionRows: counts.projectionRows,
                           devices: counts.devices, accounts: counts.accounts)
    }

    func requireAccount(_ account: UUID) async throws {
        guard try await store.accountExists(account) else { throw noAccount(account) }
    }

    private func noAccount(_ account: UUID) -> AdminUsageError {
        AdminUsageError("there is no account \(account.lowercased); `shortcut-sync admin accounts` lists them")
    }
}

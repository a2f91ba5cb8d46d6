import Foundation
import Logging
import ShortcutSyncDomain
import ShortcutSyncStore

/// What the operators' commands do (`shortcut-sync admin …`, DESIGN §7), against one database;
/// each returns a report the command line prints as a table or as JSON.
public struct Operator: Sendable {
    public let client: DatabasePool
    public let logger: Logger
    /// The database's URL, for `follow` to listen on every node of a Citus cluster (a node's
    /// `NOTIFY` is heard on that node only); nil: on a connection of `client`'s.
    public var database: DatabaseURL?

    public init(client: DatabasePool, logger: Logger, database: DatabaseURL? = nil) {
        self.client = client
        self.logger = logger
        self.database = database
    }

    var store: OperatorStore { OperatorStore(client: client, logger: logger) }

    public func accounts() async throws -> AccountsReport {
        AccountsReport(accounts: try await store.accounts().map {
            .init(accountId: $0.accountId, createdAt: $0.createdAt, devices: $0.devices, events: $0.events, lastEventAt: $0.lastEventAt)
        })
    }

    public func devices(account: UUID) async throws -> DevicesReport {
        guard let generation = try await store.tokenGeneration(account: account) else { throw noAccount(account) }
        return DevicesReport(accountId: account, accountTokenGeneration: generation, devices: try await store.devices(account: account).map {
            .init(deviceId: $0.device.deviceId, name: $0.device.name, platform: $0.device.platform, createdAt: $0.device.createdAt,
                  revokedAt: $0.device.revokedAt, events: $0.events, lastAcceptedSeq: $0.lastAcceptedSeq, lastEventAt: $0.lastEventAt,
                  installedApps: $0.installedApps?.sorted(), pushToken: $0.pushToken, pushEnvironment: $0.pushEnvironment,
                  lastWakeAt: $0.lastWakeAt, wakeCount: $0.wakeCount, signedInWith: $0.signedInWith)
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
    /// every page of it), or as it was at a prefix of its account's log (through an account
    /// version, or up to a time), replayed from the log with the domain's fold.
    public func shortcuts(device: UUID, prefix: LogPrefix = .all) async throws -> ShortcutsReport {
        guard let account = try await store.account(ofDevice: device) else {
            throw AdminUsageError("there is no device \(device.lowercased); `shortcut-sync admin devices --account A` lists an account's devices")
        }
        if prefix != .all, let horizon = try await store.horizon(of: account) {
            throw replayRefused(account: account, device: device, horizon: horizon, prefix: prefix)
        }
        switch prefix {
        case .all:
            // A pull answers a page at a time; the report is the whole view, all its pages applied.
            let view = try await ProjectionStore(client: client, logger: logger).deviceView(account: account, device: device)
            return ShortcutsReport(accountId: account, deviceId: device, source: "projections", view: view)
        case .throughVersion(let version):
            let log = try await store.accountLog(account, prefix)
            return ShortcutsReport(accountId: account, deviceId: device, source: "replay", atVersion: version, eventsReplayed: log.count,
                                   view: AccountState(folding: log.map(\.accepted)).view(forDevice: device))
        case .recordedBy(let time):
            let log = try await store.accountLog(account, prefix)
            return ShortcutsReport(accountId: account, deviceId: device, source: "replay", asOf: time, eventsReplayed: log.count,
                                   view: AccountState(folding: log.map(\.accepted)).view(forDevice: device))
        }
    }

    /// What the service would suggest on `device` at `at` (its latest donation's offset from UTC
    /// unless `utcOffsetMinutes` is given), at most `limit`, each score with its parts: the same
    /// inputs and scorer as `GET /v1/suggestions`.
    public func suggestions(device: UUID, at: Date, utcOffsetMinutes: Int?, places: [String] = [], limit: Int) async throws -> SuggestionsReport {
        guard let account = try await store.account(ofDevice: device) else {
            throw AdminUsageError("there is no device \(device.lowercased); `shortcut-sync admin devices --account A` lists an account's devices")
        }
        let inputs = try await ProjectionStore(client: client, logger: logger).suggestionInputs(account: account, device: device,
                                                                                               latestOffset: utcOffsetMinutes == nil)
        let millis = Int64((at.timeIntervalSince1970 * 1000).rounded())
        let offset = utcOffsetMinutes ?? inputs.latestUTCOffsetMinutes ?? 0
        let moment = SuggestionMoment(deviceId: device, atMillis: millis, utcOffsetMinutes: offset,
                                      deviceLabel: SuggestionMoment.label(platform: inputs.platform ?? ""), places: places)
        let ranked = SuggestionScorer().rank(inputs.candidates, at: moment, limit: limit)
        let titles = try await ProjectionStore(client: client, logger: logger).suggestionTitles(account: account, shortcuts: ranked.map(\.shortcut))
        return SuggestionsReport(accountId: account, deviceId: device, at: at, utcOffsetMinutes: offset, hourOfWeek: moment.hourOfWeek,
                                 version: inputs.version, suggestions: ranked.map {
            .init(bundleId: $0.shortcut.bundleId, identifier: $0.shortcut.identifier,
                  title: titles[$0.shortcut] ?? $0.shortcut.identifier, score: $0.score, parts: $0.parts, reason: $0.reason)
        })
    }

    /// What the account learned of `shortcut`, when it is in `device`'s view, decayed to `at`.
    public func habits(device: UUID, shortcut: ShortcutID, at: Date) async throws -> HabitsReport {
        guard let account = try await store.account(ofDevice: device) else {
            throw AdminUsageError("there is no device \(device.lowercased); `shortcut-sync admin devices --account A` lists an account's devices")
        }
        guard let habits = try await ProjectionStore(client: client, logger: logger).habits(account: account, device: device, shortcut: shortcut) else {
            throw AdminUsageError("the view of device \(device.lowercased) has no shortcut \(shortcut.bundleId)/\(shortcut.identifier); `shortcut-sync admin shortcuts --device D` lists it")
        }
        let learned = LearnedHabits(habits, atMillis: Int64((at.timeIntervalSince1970 * 1000).rounded()))
        let list = try await DeviceSyncStore(client: client, logger: logger).devices(account: account)
        let names = Dictionary(list.devices.map { ($0.deviceId, $0) }) { first, _ in first }
        return HabitsReport(accountId: account, deviceId: device, bundleId: shortcut.bundleId, identifier: shortcut.identifier, at: at,
                            hours: learned.hours, week: learned.week, devices: learned.devices.map {
            .init(deviceId: $0.deviceId, name: names[$0.deviceId]?.name ?? "", platform: names[$0.deviceId]?.platform ?? "",
                  donations: $0.donations, weight: $0.weight, hours: $0.hours)
        }, places: learned.places, learningPaused: list.learningPaused, devicesPaused: list.devices.filter(\.learningPaused).map(\.deviceId))
    }

    /// At most `limit` of the filter's events in the account's version order; the page says
    /// whether more follow, and from which version (`--after`) to ask for them.
    public func events(_ filter: EventFilter, limit: Int) async throws -> EventsReport {
        try await requireAccount(filter.account)
        // A compacted account's events start after its horizon (those kept below it are partial).
        var filter = filter
        let horizon = try await store.horizon(of: filter.account)
        if let horizon {
            if let after = filter.afterVersion, after < horizon.version { throw eventsRefused(account: filter.account, horizon: horizon) }
            filter.afterVersion = max(filter.afterVersion ?? 0, horizon.version)
        }
        // One event beyond the page tells whether more follow.
        let events = try await store.events(filter, limit: min(limit, Int.max - 1) + 1)
        let page = events.prefix(limit)
        let more = events.count > limit
        return EventsReport(events: page.map(EventRow.init), more: more, nextAfter: more ? page.last?.version : nil,
                            compacted: horizon.map(CompactedHistory.init))
    }

    /// On a Citus cluster, the change notifications of every node (`ClusterNotifications`); nil on
    /// one PostgreSQL, or when the cluster's nodes cannot be read (the poll still finds every event).
    private func clusterNotifications() async -> (any NotificationEvents)? {
        guard let database, (try? await database.citusNodes(logger: logger)) != nil else { return nil }
        return try? await database.serviceNotifications(channels: [.projection], logger: logger)
    }

    /// Hands the filter's events to `deliver` as they commit, in the account's version order,
    /// until cancelled: after the filter's `afterVersion` if it has one, else from what commits
    /// next. It reads the events past the last version read again when a change of the account is
    /// notified, and at least every `pollInterval` (an import notifies nothing). Versions are taken
    /// under the account's head lock and commit in their order, so no event is missed.
    public func follow(
        _ filter: EventFilter, pollInterval: Duration = .seconds(1),
        deliver: @escaping @Sendable ([EventRow]) async throws -> Void
    ) async throws {
        try await requireAccount(filter.account)
        if let after = filter.afterVersion, let horizon = try await store.horizon(of: filter.account), after < horizon.version {
            throw eventsRefused(account: filter.account, horizon: horizon)
        }
        let start: Int64 = if let after = filter.afterVersion { after } else { try await store.accountVersion(filter.account) }
        let (wakes, waker) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                let source = await clusterNotifications() ?? NotificationSource(.leased(from: client), channels: [.projection], logger: logger)
                try await source.withEvents { events in
                    for await event in events {
                        switch event {
                        case .projection(let notification) where notification.versions[filter.account] != nil: waker.yield()
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
                var last = start
                for await _ in wakes {
                    while true {
                        var page = filter
                        page.afterVersion = last
                        let events = try await store.events(page, limit: 1000)
                        guard let newest = events.last else { break }
                        last = newest.version
                        try await deliver(events.map(EventRow.init))
                    }
                }
            }
            waker.yield()
            try await group.next()
            group.cancelAll()
        }
    }

    /// Every event of the account that touched the shortcut or its voice shortcuts, in version
    /// order, with what it did (`ShortcutHistory`).
    public func history(account: UUID, shortcut: ShortcutID) async throws -> HistoryReport {
        try await requireAccount(account)
        // A compacted account's history starts after its horizon (the events kept below it are partial).
        let horizon = try await store.horizon(of: account)
        let log = try await store.accountLog(account, .all).filter { $0.version > horizon?.version ?? 0 }
        let entries = ShortcutHistory(shortcut: shortcut).entries(of: log.map(\.accepted)).map { entry in
            let event = log[entry.index]
            return HistoryReport.Entry(version: event.version, position: event.position, recordedAt: event.recordedAt, deviceId: event.deviceId, type: event.event.type,
                                       effects: entry.effects.map { .init(kind: $0.kind, description: $0.description) })
        }
        return HistoryReport(accountId: account, shortcut: shortcut.description, entries: entries, compacted: horizon.map(CompactedHistory.init))
    }

    public func status() async throws -> StatusReport {
        StatusReport(try await store.projectionStatus())
    }

    /// Folds the log beside the live projections and swaps them in (DESIGN §6), while the
    /// service and its maintenance tasks go on; `progress` hears how many events it folded of
    /// how many the log held when it began.
    public func rebuild(progress: @escaping @Sendable (_ processed: Int, _ total: Int) async -> Void) async throws -> RebuildReport {
        let started = ContinuousClock.now
        let rebuilder = ProjectionRebuilder(client: client, logger: logger)
        let folded = try await rebuilder.rebuild { await progress($0.processed, max($0.total, $0.processed)) }
        try await rebuilder.promote()
        let status = try await ProjectionStore(client: client, logger: logger).status()
        return RebuildReport(eventsReplayed: folded.processed, accounts: folded.accounts, epoch: status.epoch,
                             seconds: (ContinuousClock.now - started).inSeconds)
    }

    /// Folds the log beside the live projections and compares the result with them row for row.
    public func verify(progress: @escaping @Sendable (_ processed: Int, _ total: Int) async -> Void) async throws -> VerifyReport {
        let rebuilder = ProjectionRebuilder(client: client, logger: logger)
        return VerifyReport(try await rebuilder.verify { await progress($0.processed, max($0.total, $0.processed)) })
    }

    /// The account as export lines (`AccountArchive`): a compacted account's with its horizon
    /// and snapshot, and the events its log kept, each with its version (issue 58).
    public func export(account: UUID) async throws -> [String] {
        guard let record = try await store.accountRecord(account) else { throw noAccount(account) }
        let history = try await store.archivedHistory(account: account)
        let events = history.events
        // What was learned is decayed to the account's latest event: the same export of the same log, byte for byte.
        let latest = events.map(\.event.hlc.wallMillis).max() ?? 0
        let projections = ProjectionStore(client: client, logger: logger)
        return try AccountArchive.lines(account: record, devices: try await store.archivedDevices(account: account), events: events,
                                        horizon: history.horizon, snapshotRows: history.snapshotRows,
                                        retryFingerprints: history.retryFingerprints,
                                        learning: try await projections.learningRules(account: account),
                                        learned: try await projections.allHabits(account: account),
                                        at: Date(timeIntervalSince1970: Double(latest) / 1000))
    }

    /// Stores what an export holds that the database lacks, all or nothing. A compacted account's
    /// file goes whole into a database without the account's history, or adds the events it lacks
    /// to the same history; into another history it is refused (`ImportConflict`, naming both).
    public func importAccount(_ contents: AccountArchive.Contents) async throws -> ImportReport {
        let counts: ImportCounts
        do {
            counts = try await store.importAccount(contents.account, devices: contents.devices, events: contents.events,
                                                   snapshot: contents.snapshot)
        } catch let conflict as ImportedHistoryConflict {
            let account = conflict.account.lowercased
            let here = if let stored = conflict.stored {
                stored == conflict.file ? "\(Self.compactedThrough(stored)) with another snapshot" : Self.compactedThrough(stored)
            } else {
                "uncompacted"
            }
            throw ImportConflict(line: conflict.line, reason: "account \(account) is stored here \(here), at version \(conflict.storedVersion), "
                + "and the file holds it \(Self.compactedThrough(conflict.file)): two histories cut at different places cannot be merged; "
                + "to replace the stored one with the file's, erase it first (`shortcut-sync admin erase --account \(account)`)")
        }
        return ImportReport(accountId: contents.account.accountId, accountsAdded: counts.accounts, devicesAdded: counts.devices,
                            eventsAdded: counts.events, eventsAlreadyStored: counts.eventsAlreadyStored,
                            compacted: contents.snapshot.map { CompactedHistory($0.horizon) },
                            snapshotRowsAdded: contents.snapshot.map { _ in counts.snapshotRows })
    }

    public func erase(account: UUID) async throws -> EraseReport {
        try await requireAccount(account)
        let counts = try await store.erase(account: account)
        return EraseReport(accountId: account, events: counts.events, projectionRows: counts.projectionRows,
                           devices: counts.devices, accounts: counts.accounts)
    }

    /// Stores `tokenHash` as the account's token (the caller made the token and shows it once):
    /// the old one stops working on every server at once. With `signingOutDevices`, every
    /// signed-in device of the account is signed out in the same transaction (`signOut(account:…)`
    /// says what that does): a leaked token's devices go with it. The new token's generation and
    /// the devices signed out.
    public func rotateAccountToken(account: UUID, tokenHash: [UInt8], signingOutDevices: Bool = false) async throws -> SignedOutDevices {
        let rotated: SignedOutDevices?
        if signingOutDevices {
            rotated = try await PostgresEventStore(client: client, logger: logger)
                .signOutDevices(account: account, rotatingTo: tokenHash, wallMillis: Self.nowMillis)
        } else {
            rotated = try await AccountStore(client: client, logger: logger).rotateToken(account: account, tokenHash: tokenHash)
                .map { SignedOutDevices(tokenGeneration: $0, devices: []) }
        }
        guard let rotated else { throw noAccount(account) }
        return rotated
    }

    /// Signs out, in one transaction, every device of the account still signed in that the
    /// account token of `generation` signed in (`admin devices` shows it): each as `signOut(device:)`
    /// does, its token refused on every server at once, its streams ended, its push token gone,
    /// its `deviceSignedOut` event in the log. The devices signed out (none: nothing to do).
    public func signOut(account: UUID, signedInWith generation: Int) async throws -> SignedOutDevices {
        guard let signedOut = try await PostgresEventStore(client: client, logger: logger)
            .signOutDevices(account: account, signedInWith: generation, wallMillis: Self.nowMillis) else {
            throw noAccount(account)
        }
        return signedOut
    }

    /// Tells every server of the database that the admin token's file holds a new token: each
    /// reads its file again at once (`admin rotate-admin-token`, after writing it).
    public func announceAdminTokenRotated() async throws {
        try await store.announceAdminTokenRotated()
    }

    /// Now, as the sign-outs' events are stamped.
    private static var nowMillis: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// Signs the device out, as `DELETE /v1/devices/{id}` does: its token stops working on every
    /// server at once, its open streams end, its push token goes, what it taught the suggestions
    /// is forgotten; its events stay.
    public func signOut(device: UUID, account: UUID) async throws {
        try await requireAccount(account)
        let events = PostgresEventStore(client: client, logger: logger)
        guard try await events.signOut(device: device, account: account, wallMillis: Int64(Date().timeIntervalSince1970 * 1000)) else {
            throw AdminUsageError("account \(account.lowercased) has no device \(device.lowercased); `shortcut-sync admin devices --account A` lists its devices")
        }
    }

    func requireAccount(_ account: UUID) async throws {
        guard try await store.accountExists(account) else { throw noAccount(account) }
    }

    func noAccount(_ account: UUID) -> AdminUsageError {
        AdminUsageError("there is no account \(account.lowercased); `shortcut-sync admin accounts` lists them")
    }
}

import Foundation
import Logging
import OpenAPIRuntime
import ShortcutSyncDomain

/// What an app embeds to keep its shortcuts in step with the person's other devices.
///
/// It reads like SiriKit: `donate(_:)` an interaction or a user activity, `deleteDonations…`,
/// `addVoiceShortcut(phrase:for:)`; `shortcuts()` and `voiceShortcuts()` answer from the last
/// view pulled, at once and offline. Every call that changes something is stored in the
/// device's outbox (SQLite) before it returns, and pushed from there: an app killed between a
/// donation and its push sends it when it opens again, once. `run()` keeps the device in step
/// while the app runs: it pushes what waits (retrying with backoff, after `Retry-After` when the
/// service says), listens to the service's stream and pulls when poked or pushed. Each such pull
/// waits for the account version it heard of (its push's answer, the poke's `{"version": N}`), so
/// that what it pushed or was told of is in the answer.
public actor ShortcutSyncClient {
    public struct Configuration: Sendable {
        /// The app whose donations this client makes and deletes (like SiriKit's, per app).
        public var bundleId: String
        /// The SQLite file that keeps the outbox, the clock and the last view.
        public var storagePath: String
        /// The first wait after a failed push or a broken stream; it doubles up to `maximumBackoff`.
        public var initialBackoff: Duration = .milliseconds(200)
        public var maximumBackoff: Duration = .seconds(30)
        /// The most events one push carries (the service takes 500).
        public var pushBatchSize = 500
        /// How long, and how much of, what the service acknowledged the device keeps, to give it
        /// back should the service's database lose it (a restored backup).
        public var recoveryWindow = RecoveryWindow.standard
        /// The device's clock, in epoch milliseconds.
        public var now: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
        /// The device's offset from UTC at a moment (epoch milliseconds), in minutes: each
        /// donation carries it, so the service learns the person's local hours (DESIGN §2).
        public var utcOffsetMinutes: @Sendable (Int64) -> Int = { millis in
            TimeZone.current.secondsFromGMT(for: Date(timeIntervalSince1970: Double(millis) / 1000)) / 60
        }

        /// The person's place key (`PlaceKey`), from the app's synchronizable keychain item; nil
        /// when this device has none: its donations carry no place and its suggestions are by
        /// time alone.
        public var placeKey: PlaceKey?
        /// Where the device is now, when the app knows and the person allows it; nil otherwise.
        /// Only its cell's token, made here under `placeKey`, reaches the service.
        public var location: @Sendable () -> PlaceCoordinate? = { nil }

        public init(bundleId: String, storagePath: String) {
            self.bundleId = bundleId
            self.storagePath = storagePath
        }
    }

    /// The versions a pull may wait for: `waitFor`'s bounds in the spec (0…2^53), less 0, which
    /// needs no wait. A version beyond them (a defective answer) is not waited for: the service
    /// would refuse the pull.
    static let waitableVersions: ClosedRange<Int64> = 1...(1 << 53)

    public let configuration: Configuration
    /// The device's transport: replaced by `signIn(transport:)`.
    private(set) var transport: any SyncTransport
    private let store: ClientStore
    private let logger: Logger
    private var view: DeviceView
    private var subscribers: [UUID: AsyncStream<DeviceView>.Continuation] = [:]
    private var wake: AsyncStream<Void>.Continuation?

    /// Opens (or creates) the device's storage; nothing is sent until `sync()` or `run()`.
    public init(configuration: Configuration, transport: any SyncTransport, logger: Logger = Logger(label: "shortcut-sync-client")) throws {
        self.configuration = configuration
        self.transport = transport
        self.logger = logger
        store = try ClientStore(path: configuration.storagePath)
        view = try store.view()
    }

    // MARK: SiriKit-like calls

    /// Donates an intent interaction (`INInteraction.donate`); returns the change's id
    /// (`confirmed(_:on:)`), as every call that records a change here does.
    @discardableResult
    public func donate(_ interaction: IntentDonation) throws -> UUID {
        try record(.donation(localized(interaction.donation(bundleId: configuration.bundleId), at: interaction.location)))
    }

    /// Donates a user activity eligible for prediction (`NSUserActivity.becomeCurrent`).
    @discardableResult
    public func donate(_ activity: UserActivityDonation) throws -> UUID {
        try record(.donation(localized(activity.donation(bundleId: configuration.bundleId), at: activity.location)))
    }

    /// The donation with the device's offset from UTC now (held to −720…840 minutes), and its
    /// place: the token of the cell of the donation's own location (`IntentDonation.location`) or
    /// else the device's, when the device holds the place key.
    private func localized(_ donation: Donation, at location: PlaceCoordinate?) -> Donation {
        var donation = donation
        let offset = configuration.utcOffsetMinutes(configuration.now())
        donation.utcOffsetMinutes = min(max(offset, Limits.utcOffsetMinutes.lowerBound), Limits.utcOffsetMinutes.upperBound)
        if let key = configuration.placeKey, let coordinate = location ?? configuration.location() {
            donation.place = key.token(at: coordinate)
        }
        return donation
    }

    /// The tokens of where the device is, for a suggestions request: none without the key or a location.
    private func placesHere() -> [String] {
        guard let key = configuration.placeKey, let coordinate = configuration.location() else { return [] }
        return key.tokens(around: coordinate)
    }

    // MARK: Suggestions

    /// What the service suggests on this device at `at` (now when nil), at most `limit` (1…20),
    /// learned from the person's donations on all of their devices, where the device is when it
    /// holds the place key and knows its location (`Configuration`). The answer is kept on the
    /// device: when the service cannot be reached, the last one kept comes back, marked `offline`
    /// (nil if there is none). A refusal (a bad `limit`, a signed-out device) is thrown.
    public func suggestions(at: Date? = nil, limit: Int = 4) async throws -> SuggestionsAnswer? {
        let millis = at.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
        let offset = configuration.utcOffsetMinutes(millis ?? configuration.now())
        do {
            let answer = try await transport.suggestions(
                at: millis, limit: limit,
                utcOffsetMinutes: min(max(offset, Limits.utcOffsetMinutes.lowerBound), Limits.utcOffsetMinutes.upperBound),
                places: placesHere())
            try store.saveSuggestions(answer)
            return answer
        } catch {
            if case .refused = SyncTransportError.unwrapping(error) { throw error }
            logger.info("suggestions could not be asked for; answering with the last ones kept", metadata: ["error": "\(error)"])
            guard var kept = try store.lastSuggestions() else { return nil }
            kept.offline = true
            return kept
        }
    }

    /// What the service has learned of `shortcut` from the person's donations on all of their
    /// devices (issue 34): each hour of their week and each device's share, for the app to show
    /// ("you order soup on Friday evenings, mostly on your iPhone"); nil when the shortcut is not
    /// in this device's view. Needs the service: nothing learned is kept on the device.
    public func habits(of shortcut: ShortcutView) async throws -> HabitsAnswer? {
        try await transport.habits(bundleId: shortcut.bundleId, identifier: shortcut.identifier)
    }

    /// `INInteraction.delete(with:)`: the app's donations with these identifiers.
    @discardableResult
    public func deleteDonations(withIdentifiers identifiers: [String]) throws -> UUID {
        try record(.deletion(Deletion(bundleId: configuration.bundleId, selector: .identifiers(identifiers))))
    }

    /// `INInteraction.delete(with groupIdentifier:)`.
    @discardableResult
    public func deleteDonations(withGroupIdentifier group: String) throws -> UUID {
        try record(.deletion(Deletion(bundleId: configuration.bundleId, selector: .groupIdentifier(group))))
    }

    /// `INInteraction.deleteAll()`: every donation of the app.
    @discardableResult
    public func deleteAllDonations() throws -> UUID {
        try record(.deletion(Deletion(bundleId: configuration.bundleId, selector: .all)))
    }

    /// Binds a phrase to one of the app's shortcuts (`INVoiceShortcutCenter`); returns the new
    /// voice shortcut's id. Whether the phrase is free shows in `voiceShortcuts()` once synced.
    @discardableResult
    public func addVoiceShortcut(phrase: String, for shortcut: ShortcutView) throws -> UUID {
        let id = UUID()
        try record(.voiceShortcutAdded(VoiceShortcutAdded(
            voiceShortcutId: id, phrase: phrase, bundleId: shortcut.bundleId, identifier: shortcut.identifier, title: shortcut.title)))
        return id
    }

    public func updateVoiceShortcut(_ id: UUID, phrase: String) throws {
        try record(.voiceShortcutUpdated(VoiceShortcutUpdated(voiceShortcutId: id, phrase: phrase)))
    }

    public func deleteVoiceShortcut(_ id: UUID) throws {
        try record(.voiceShortcutDeleted(VoiceShortcutDeleted(voiceShortcutId: id)))
    }

    // MARK: What the suggestions learn, in the person's hands

    /// Forgets what the suggestions learned of `scope`, on every device: the whole account, one
    /// device (its id from `devices()`), or one shortcut. Every donation of the scope made
    /// before now stops teaching, for good (a rebuild of the service keeps it forgotten); the
    /// shortcuts themselves stay. Synced like every change: pushed from the outbox.
    @discardableResult
    public func forgetLearning(_ scope: LearningScope) throws -> UUID {
        try record(.learningForgotten(LearningForgotten(scope: scope)))
    }

    /// Forgets where the suggestions learned shortcuts are used at `coordinate`, on every device:
    /// every donation made before now in its cell (and in any place sharing the cell's slot,
    /// `PlaceToken`) stops teaching where it was made, and still teaches when. Needs the place
    /// key (`Configuration.placeKey`).
    @discardableResult
    public func forgetPlace(at coordinate: PlaceCoordinate) throws -> UUID {
        guard let key = configuration.placeKey else { throw ClientStoreError.noPlaceKey }
        guard let token = key.token(at: coordinate), let slot = PlaceToken.slot(of: token) else { throw ClientStoreError.notACoordinate }
        return try forgetLearning(.place(slot))
    }

    /// Pauses the suggestions' learning of the account or of one device: donations still sync
    /// and views stay exact, but donations made while it is paused teach nothing.
    @discardableResult
    public func pauseLearning(_ scope: LearningScope) throws -> UUID {
        try record(.learningPaused(LearningPaused(scope: try Self.pausable(scope), paused: true)))
    }

    /// Resumes what `pauseLearning(_:)` paused: donations from now on teach again.
    @discardableResult
    public func resumeLearning(_ scope: LearningScope) throws -> UUID {
        try record(.learningPaused(LearningPaused(scope: try Self.pausable(scope), paused: false)))
    }

    private static func pausable(_ scope: LearningScope) throws -> LearningScope {
        if !scope.isPausable { throw ClientStoreError.notPausable }
        return scope
    }

    /// Tells the service which apps are installed: this device then sees only their items.
    @discardableResult
    public func reportInstalledApps(_ bundleIds: [String]) throws -> UUID {
        try record(.appsReported(AppsReported(installed: bundleIds)))
    }

    /// The shortcuts of the last view pulled, by bundle and identifier.
    public func shortcuts() -> [ShortcutView] {
        view.shortcuts.values.sorted { $0.shortcutID < $1.shortcutID }
    }

    /// The voice shortcuts of the last view pulled; one whose `status` is `phraseConflict` waits
    /// for the person to choose another phrase (`conflictsWith` owns it).
    public func voiceShortcuts() -> [VoiceShortcutView] {
        view.voiceShortcuts.values.sorted { ($0.phrase, $0.voiceShortcutId.uuidString) < ($1.phrase, $1.voiceShortcutId.uuidString) }
    }

    /// The last view pulled.
    public var currentView: DeviceView { view }

    /// How many events wait in the outbox to be pushed.
    public func pendingCount() throws -> Int {
        try store.pendingCount()
    }

    /// What the recovery window holds: how many acknowledged events, and their bytes (of JSON).
    public func keptChanges() throws -> (events: Int, bytes: Int) {
        try store.keptSize()
    }

    /// Whether the service refused this device's token (401) and the app must sign it in again
    /// (`signIn(transport:)`); until then every sync fails with `SignInRequired`.
    public func signInRequired() throws -> Bool {
        try store.state().signInRequired
    }

    /// The device signed in again, as a new device of the same account (the app made it with
    /// `POST /v1/devices` and the account's token, and gives its transport here), after the
    /// service stopped knowing the old one (`SignInRequired`): typically, the device had signed in
    /// after the backup the service's database was restored from. What the old identity's
    /// recovery window kept is sent again as the new device's, first, with new seqs but the same
    /// ids and clocks (so the fold places each change where it was), then what waits in the
    /// outbox; the next pull is the whole view. Should the service hold those events already (the
    /// device had been signed out, its events kept), they are dropped at the first push that says
    /// so. Returns how many kept events are sent again. Call it while `run()` is not running.
    @discardableResult
    public func signIn(transport: any SyncTransport) throws -> Int {
        let resent = try store.signedIn()
        self.transport = transport
        logger.notice("signed in as a new device; the old identity's kept changes are sent again", metadata: ["kept": "\(resent)"])
        wake?.yield()
        return resent
    }

    /// The account's signed-in devices and what each has of it (`GET /v1/devices`): "synced to
    /// your iPad two minutes ago".
    public func devices() async throws -> DevicesAnswer {
        try await transport.devices()
    }

    /// Whether `change` (what a donation, a deletion or a report of apps returned) has reached
    /// `device`: false while it waits in this device's outbox, and until `device` has pulled the
    /// account version that stored it. Asks the service once the change is stored. Throws for a
    /// change not made here (or among the oldest, no longer remembered).
    public func confirmed(_ change: UUID, on device: UUID) async throws -> Bool {
        guard let version = try store.storedVersion(of: change) else { return false }
        let answer = try await transport.devices()
        return answer.devices.first { $0.deviceId == device }.map { $0.syncedVersion >= version } ?? false
    }

    /// Every view this device pulls from now on (the current one first).
    public func viewChanges() -> AsyncStream<DeviceView> {
        let (stream, continuation) = AsyncStream.makeStream(of: DeviceView.self, bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        subscribers[id] = continuation
        continuation.yield(view)
        continuation.onTermination = { _ in Task { await self.unsubscribe(id) } }
        return stream
    }

    private func unsubscribe(_ id: UUID) {
        subscribers[id] = nil
    }

    /// Puts the event in the outbox and wakes the push loop; returns its id, the change's.
    @discardableResult
    private func record(_ body: EventBody) throws -> UUID {
        let event = try store.enqueue(body, physicalMillis: configuration.now())
        wake?.yield()
        return event.id
    }

    // MARK: Syncing

    /// Pushes everything waiting, then pulls what changed (waiting for its own pushes to show):
    /// once, now. Throws what the service or the network said.
    public func sync() async throws {
        try await signInChecked {
            let version = try await pushPending()
            // A pull that found the service missing acknowledged changes put them back in the
            // outbox: they are pushed, and what they change pulled.
            if try await pull(waitFor: version) {
                let version = try await pushPending()
                try await pull(waitFor: version)
            }
        }
    }

    /// `operation`, with a refusal of the device's token (401) recorded and thrown as `SignInRequired`.
    private func signInChecked<T>(_ operation: () async throws -> T) async throws -> T {
        do {
            return try await operation()
        } catch {
            if case .refused(401, let detail) = SyncTransportError.unwrapping(error) {
                try store.requireSignIn()
                logger.error("the service no longer knows this device: it must sign in again", metadata: ["detail": "\(detail)"])
                throw SignInRequired(detail: detail)
            }
            throw error
        }
    }

    /// Pushes the outbox, batch by batch; returns the account's version after the last push
    /// (0 if nothing was pushed).
    @discardableResult
    func pushPending() async throws -> Int64 {
        var version: Int64 = 0
        while true {
            let batch = try store.pending(limit: configuration.pushBatchSize)
            guard let first = batch.first else { return version }
            switch try await transport.push(batch) {
            case .accepted(let lastAcceptedSeq, let after):
                try store.acknowledge(through: lastAcceptedSeq, version: after, physicalMillis: configuration.now(),
                                      window: configuration.recoveryWindow)
                version = max(version, after)
            case .seqMismatch(let expectedSeq):
                // Below what the service acknowledged: its database lost changes (a restored
                // backup), and the recovery window gives them back as they were, before what waits.
                if try store.giveBack(from: expectedSeq) {
                    logger.notice("the service lost acknowledged changes: the kept ones are sent again", metadata: [
                        "expected_seq": "\(expectedSeq)", "first_pending_seq": "\(first.seq)",
                    ])
                } else {
                    logger.notice("the service expects another seq: the outbox is numbered anew", metadata: [
                        "expected_seq": "\(expectedSeq)", "first_pending_seq": "\(first.seq)",
                    ])
                    try store.renumberPending(from: expectedSeq)
                }
            case .idAlreadyStored(let index):
                // After a sign-in, the old identity's kept events are stored already: it had been
                // signed out, not lost. Otherwise a refusal like any other.
                guard try store.dropResent() else {
                    throw SyncTransportError.refused(status: 409, detail: "event \(index) of the push has an id stored with another seq")
                }
                logger.notice("the old identity's changes are stored already: they are not sent again")
            }
        }
    }

    /// Pulls with the stored cursor and stores the new view. An answer that stopped at its page
    /// size (`more`) is followed at once by the next page, and so on: each page is stored as it
    /// comes (an app killed in between goes on from there), but the view this client answers
    /// with and publishes changes only once the last page is applied, never to a part of one.
    /// With `version` (the account's), the first page waits until the view includes it; a version
    /// outside `waitableVersions` is not waited for.
    ///
    /// An answer whose `lastAcceptedSeq` is below what the service had acknowledged to this device
    /// when the pull was sent says that the service lost changes (a restored backup): the kept
    /// ones go back to the outbox (`ClientStore.giveBack`), the push loop is woken, and it returns
    /// true.
    @discardableResult
    func pull(waitFor version: Int64? = nil) async throws -> Bool {
        var waitFor = version.flatMap { Self.waitableVersions.contains($0) ? $0 : nil }
        var gaveBack = false
        while true {
            let state = try store.state()
            let answer = try await transport.pull(cursor: state.cursor, waitFor: waitFor, timeoutMillis: waitFor == nil ? nil : 10_000)
            if !gaveBack, answer.lastAcceptedSeq >= 0, answer.lastAcceptedSeq < state.acknowledgedSeq,
               try store.giveBack(from: answer.lastAcceptedSeq + 1) {
                logger.notice("the service lost acknowledged changes: the kept ones are sent again", metadata: [
                    "last_accepted_seq": "\(answer.lastAcceptedSeq)", "acknowledged_seq": "\(state.acknowledgedSeq)",
                ])
                gaveBack = true
                wake?.yield()
            }
            let updated = try store.apply(reset: answer.reset, more: answer.more, changes: answer.changes, cursor: answer.cursor,
                                          serviceClock: answer.serviceClock, physicalMillis: configuration.now())
            guard let updated else {
                // The first page already waited for `version`; the next ones need not.
                waitFor = nil
                continue
            }
            if updated != view {
                view = updated
                for subscriber in subscribers.values { subscriber.yield(updated) }
            }
            return gaveBack
        }
    }

    /// Keeps the device in step until cancelled: pushes as soon as something is recorded (and
    /// at start, for what an earlier run left), pulls after each push (waiting for its version),
    /// and listens to the stream, pulling at each poke (waiting for the version it names) and
    /// after each reconnection. Failures are retried with backoff; `Retry-After` is honoured.
    public func run() async throws {
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.wake = wake
        wake.yield()
        defer { self.wake = nil }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.pushLoop(wakes) }
            group.addTask { try await self.streamLoop() }
            try await group.next()
            group.cancelAll()
        }
    }

    private func pushLoop(_ wakes: AsyncStream<Void>) async throws {
        for await _ in wakes {
            try await retrying("push") { try await self.sync() }
        }
    }

    private func streamLoop() async throws {
        var failures = 0
        while !Task.isCancelled {
            do {
                let pokes = try await transport.tracedPokes()
                failures = 0
                try await retrying("pull") { try await self.pull() }  // what changed while not listening
                for try await poke in pokes {
                    // The pull joins the trace of the change that poked it (when the service traces).
                    try await TraceContext.following(poke.traceparent) {
                        try await retrying("pull") { try await self.pull(waitFor: poke.version) }
                    }
                }
            } catch where !Task.isCancelled {
                if error is SignInRequired { throw error }
                if case .refused(401, _) = SyncTransportError.unwrapping(error) {
                    try await signInChecked { throw error }
                }
                logger.info("the stream ended; reconnecting", metadata: ["error": "\(error)"])
                failures += 1
            }
            try await Task.sleep(for: backoff(after: failures, retryAfter: nil))
        }
    }

    /// Runs `operation` until it succeeds or fails for good (a refusal), waiting between tries.
    private func retrying(_ what: String, _ operation: () async throws -> Void) async throws {
        var failures = 0
        while true {
            do {
                return try await signInChecked { try await operation() }
            } catch where !Task.isCancelled {
                if error is SignInRequired { throw error }
                let reason = SyncTransportError.unwrapping(error)
                if case .refused = reason {
                    logger.error("the service refused a \(what); it will not be retried", metadata: ["error": "\(reason.map { "\($0)" } ?? "\(error)")"])
                    throw error
                }
                failures += 1
                let retryAfter: Int? = if case .retryLater(let seconds) = reason { seconds } else { nil }
                let delay = backoff(after: failures, retryAfter: retryAfter)
                logger.info("a \(what) failed; retrying", metadata: ["error": "\(error)", "delay": "\(delay)"])
                try await Task.sleep(for: delay)
            }
        }
    }

    /// The wait after `failures` failures in a row: doubling from the initial backoff, at most
    /// the maximum, never less than `Retry-After` (itself held to an hour).
    func backoff(after failures: Int, retryAfter: Int?) -> Duration {
        guard failures > 0 else { return .zero }
        var delay = configuration.initialBackoff
        for _ in 1..<min(failures, 20) where delay < configuration.maximumBackoff { delay *= 2 }
        delay = min(delay, configuration.maximumBackoff)
        // The service's number, bounded before use: an hour at most, never negative.
        if let retryAfter { delay = max(delay, .seconds(min(max(retryAfter, 0), 3600))) }
        return delay
    }
}

extension SyncTransportError {
    /// The transport error behind `error`, which the generated client wraps in its `ClientError`.
    static func unwrapping(_ error: any Error) -> SyncTransportError? {
        if let error = error as? SyncTransportError { return error }
        if let error = error as? ClientError { return unwrapping(error.underlyingError) }
        return nil
    }
}

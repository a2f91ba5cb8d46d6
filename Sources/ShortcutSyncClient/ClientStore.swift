import Foundation
import GRDB
import ShortcutSyncDomain

/// What a client keeps on the device, in one SQLite file: the outbox of events not yet accepted
/// by the service, the events it accepted within the recovery window (`kept`, to give back what
/// a restored database lost), the device's clock and seq, and the last view with its cursor.
///
/// Every change is one SQLite transaction (journal in WAL mode, synchronous FULL): an app
/// killed at any moment reopens with either all of a change or none of it. An event is in the
/// outbox from the moment `enqueue` returns until the service acknowledged its seq, so it is
/// never lost; it keeps its id and seq across resends, so the service stores it once.
final class ClientStore: Sendable {
    private let database: DatabaseQueue

    init(path: String) throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        database = try DatabaseQueue(path: path, configuration: configuration)
        try database.writeWithoutTransaction { db in
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
        }
        var migrator = DatabaseMigrator()
        migrator.registerMigration("1: outbox, state, view") { db in
            try db.execute(sql: """
                CREATE TABLE outbox (seq INTEGER PRIMARY KEY, event TEXT NOT NULL);
                CREATE TABLE state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                """)
        }
        // The account version at which each change the service acknowledged was stored, so that
        // `confirmed(_:on:)` can tell whether another device has pulled that far.
        migrator.registerMigration("2: stored changes") { db in
            try db.execute(sql: "CREATE TABLE stored (event_id TEXT PRIMARY KEY, version INTEGER NOT NULL)")
        }
        // The recovery window: each event the service acknowledged, as it was sent (id, seq,
        // clock), with when it was acknowledged (the device's clock, epoch milliseconds), for as
        // long as `RecoveryWindow` says; sent again when the service turns out to have lost it.
        migrator.registerMigration("3: recovery window") { db in
            try db.execute(sql: "CREATE TABLE kept (seq INTEGER PRIMARY KEY, event TEXT NOT NULL, acknowledged_at INTEGER NOT NULL)")
        }
        try migrator.migrate(database)
    }

    /// How many acknowledged changes `stored` remembers (the newest): a change older than these
    /// is not asked about by an app that shows what it just did.
    static let storedChangesKept = 10_000

    /// What the device knows of itself. (Its view is kept apart, under its own key: recording an
    /// event changes this, never the view.)
    struct State: Sendable, Codable, Equatable {
        /// The seq of the last event made.
        var lastSeq: Int64 = 0
        var clock = HLCTimestamp.zero
        /// The cursor to pull with next: the view stored's, or, between the pages of an answer,
        /// the last page's (its view kept apart until the last page).
        var cursor: String?
        /// The greatest seq the service acknowledged to this device identity: a service that
        /// says it holds less (a push's `expectedSeq`, a pull's `lastAcceptedSeq`) lost some.
        var acknowledgedSeq: Int64 = 0
        /// The service refused the device's token (401): the app must sign the device in again.
        var signInRequired = false
        /// After a sign-in as a new device, the outbox's events up to this seq are the kept
        /// events of the old identity sent again; nil when there are none.
        var resentThrough: Int64?

        init() {}

        // The fields added later are absent from a state stored before them.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            lastSeq = try container.decode(Int64.self, forKey: .lastSeq)
            clock = try container.decode(HLCTimestamp.self, forKey: .clock)
            cursor = try container.decodeIfPresent(String.self, forKey: .cursor)
            acknowledgedSeq = try container.decodeIfPresent(Int64.self, forKey: .acknowledgedSeq) ?? 0
            signInRequired = try container.decodeIfPresent(Bool.self, forKey: .signInRequired) ?? false
            resentThrough = try container.decodeIfPresent(Int64.self, forKey: .resentThrough)
        }
    }

    /// A device view in a form that encodes.
    struct StoredView: Sendable, Codable, Equatable {
        var shortcuts: [ShortcutView] = []
        var voiceShortcuts: [VoiceShortcutView] = []

        init() {}

        init(_ view: DeviceView) {
            shortcuts = view.shortcuts.values.sorted { $0.shortcutID < $1.shortcutID }
            voiceShortcuts = view.voiceShortcuts.values.sorted { $0.voiceShortcutId.uuidString < $1.voiceShortcutId.uuidString }
        }

        var view: DeviceView {
            DeviceView(shortcuts: Dictionary(uniqueKeysWithValues: shortcuts.map { ($0.shortcutID, $0) }),
                       voiceShortcuts: Dictionary(uniqueKeysWithValues: voiceShortcuts.map { ($0.voiceShortcutId, $0) }))
        }
    }

    /// The last suggestions the service answered, for offline use.
    func lastSuggestions() throws -> SuggestionsAnswer? {
        try database.read { try Self.load(SuggestionsAnswer.self, "suggestions", $0) }
    }

    func saveSuggestions(_ answer: SuggestionsAnswer) throws {
        try database.write { try Self.save(answer, "suggestions", $0) }
    }

    func state() throws -> State {
        try database.read { try Self.state($0) }
    }

    /// The last view pulled.
    func view() throws -> DeviceView {
        try database.read { try Self.load(StoredView.self, "view", $0)?.view ?? .empty }
    }

    private static func state(_ db: Database) throws -> State {
        try load(State.self, "device", db) ?? State()
    }

    private static func save(_ state: State, _ db: Database) throws {
        try save(state, "device", db)
    }

    private static func load<Value: Decodable>(_ type: Value.Type, _ key: String, _ db: Database) throws -> Value? {
        guard let json = try String.fetchOne(db, sql: "SELECT value FROM state WHERE key = ?", arguments: [key]) else { return nil }
        return try JSONDecoder().decode(type, from: Data(json.utf8))
    }

    private static func save(_ value: some Encodable, _ key: String, _ db: Database) throws {
        let json = String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
        try db.execute(sql: "INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                       arguments: [key, json])
    }

    /// Makes the next event of this device (next seq, clock ticked) and puts it in the outbox, in
    /// one transaction; returns it.
    func enqueue(_ body: EventBody, physicalMillis: Int64) throws -> Event {
        try database.write { db in
            var state = try Self.state(db)
            var clock = HybridLogicalClock(last: state.clock)
            state.lastSeq += 1
            let event = Event(seq: state.lastSeq, hlc: clock.tick(physicalMillis: physicalMillis), body: body)
            state.clock = clock.last
            try db.execute(sql: "INSERT INTO outbox (seq, event) VALUES (?, ?)",
                           arguments: [event.seq, String(decoding: try JSONEncoder().encode(event), as: UTF8.self)])
            try Self.save(state, db)
            return event
        }
    }

    /// The oldest events of the outbox, up to `limit`, in seq order.
    func pending(limit: Int) throws -> [Event] {
        try database.read { db in
            try String.fetchAll(db, sql: "SELECT event FROM outbox ORDER BY seq LIMIT ?", arguments: [limit]).map {
                try JSONDecoder().decode(Event.self, from: Data($0.utf8))
            }
        }
    }

    func pendingCount() throws -> Int {
        try database.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM outbox") ?? 0 }
    }

    /// The service holds every event up to `seq`, stored at or before the account's `version`:
    /// they leave the outbox for the recovery window (`kept`, as they were sent, acknowledged at
    /// `physicalMillis`; the window's oldest let go past its bounds), and `stored` remembers that
    /// version for each (the newest `storedChangesKept`).
    func acknowledge(through seq: Int64, version: Int64, physicalMillis: Int64, window: RecoveryWindow) throws {
        try database.write { db in
            let acknowledged = try String.fetchAll(db, sql: "SELECT event FROM outbox WHERE seq <= ? ORDER BY seq", arguments: [seq]).map {
                try JSONDecoder().decode(Event.self, from: Data($0.utf8))
            }
            for event in acknowledged {
                try db.execute(sql: "INSERT OR REPLACE INTO stored (event_id, version) VALUES (?, ?)", arguments: [event.id.uuidString, version])
            }
            try db.execute(sql: "DELETE FROM stored WHERE rowid <= (SELECT max(rowid) FROM stored) - ?", arguments: [Self.storedChangesKept])
            try db.execute(sql: "INSERT OR REPLACE INTO kept (seq, event, acknowledged_at) SELECT seq, event, ? FROM outbox WHERE seq <= ?",
                           arguments: [physicalMillis, seq])
            try db.execute(sql: "DELETE FROM outbox WHERE seq <= ?", arguments: [seq])
            try Self.trim(window, physicalMillis: physicalMillis, db)
            var state = try Self.state(db)
            state.acknowledgedSeq = max(state.acknowledgedSeq, seq)
            if let resent = state.resentThrough, resent <= seq { state.resentThrough = nil }
            try Self.save(state, db)
        }
    }

    /// Lets go of the kept events past the window's bounds, the oldest first: acknowledged
    /// longer ago than its duration, beyond its count, beyond its bytes (of their JSON).
    private static func trim(_ window: RecoveryWindow, physicalMillis: Int64, _ db: Database) throws {
        let oldest = physicalMillis - Int64(window.duration.components.seconds) * 1000
        try db.execute(sql: "DELETE FROM kept WHERE acknowledged_at < ?", arguments: [oldest])
        try db.execute(sql: "DELETE FROM kept WHERE seq <= (SELECT seq FROM kept ORDER BY seq DESC LIMIT 1 OFFSET ?)",
                       arguments: [window.maximumEvents])
        try db.execute(sql: """
            DELETE FROM kept WHERE seq <= (SELECT max(seq) FROM (
                SELECT seq, sum(length(CAST(event AS BLOB))) OVER (ORDER BY seq DESC) AS bytes FROM kept) WHERE bytes > ?)
            """, arguments: [window.maximumBytes])
    }

    /// The bytes of the file's pages in use (free pages left out) once its journal is
    /// checkpointed into it: what the device's storage costs (`RecoveryWindowTests` measures
    /// the window with it).
    func checkpointedSize() throws -> Int {
        try database.writeWithoutTransaction { db in
            _ = try Row.fetchAll(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            let free = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
            let size = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0
            return (pages - free) * size
        }
    }

    /// How many events the recovery window holds, and their bytes (of JSON).
    func keptSize() throws -> (events: Int, bytes: Int) {
        try database.read { db in
            let row = try Row.fetchOne(db, sql: "SELECT count(*), coalesce(sum(length(CAST(event AS BLOB))), 0) FROM kept")
            return (row?[0] ?? 0, row?[1] ?? 0)
        }
    }

    /// The service holds this device's events only up to `expectedSeq - 1`, less than it had
    /// acknowledged (a restored backup, a point-in-time recovery): the kept events from there go
    /// back to the outbox, as they were (ids, seqs, clocks), before what waits there. Should the
    /// window no longer hold them all (or a gap remain), the outbox is numbered anew from
    /// `expectedSeq`, ids and clocks kept. Returns false, changing nothing, when the service lost
    /// nothing this device knows of (`expectedSeq` past what it acknowledged).
    func giveBack(from expectedSeq: Int64) throws -> Bool {
        guard Limits.seqRange.contains(expectedSeq) else { throw ClientStoreError.seqOutOfRange(expectedSeq) }
        return try database.write { db in
            var state = try Self.state(db)
            guard expectedSeq <= state.acknowledgedSeq else { return false }
            try db.execute(sql: "INSERT OR REPLACE INTO outbox (seq, event) SELECT seq, event FROM kept WHERE seq >= ?", arguments: [expectedSeq])
            try db.execute(sql: "DELETE FROM kept WHERE seq >= ?", arguments: [expectedSeq])
            state.acknowledgedSeq = expectedSeq - 1
            try Self.save(state, db)
            let seqs = try Int64.fetchAll(db, sql: "SELECT seq FROM outbox ORDER BY seq")
            if seqs != Array(expectedSeq..<(expectedSeq + Int64(seqs.count))) {
                try Self.renumberOutbox(from: expectedSeq, db)
            }
            return true
        }
    }

    /// The service refused this device's token (401).
    func requireSignIn() throws {
        try database.write { db in
            var state = try Self.state(db)
            state.signInRequired = true
            try Self.save(state, db)
        }
    }

    /// The device signed in again as a new device: the kept events of its old identity (which
    /// the service lost with it) and those waiting go to the outbox numbered from 1, in order,
    /// ids and clocks kept; the cursor of the old identity goes (the next pull is the whole
    /// view). Returns how many kept events are sent again.
    func signedIn() throws -> Int {
        try database.write { db in
            let kept = try String.fetchAll(db, sql: "SELECT event FROM kept ORDER BY seq")
            try db.execute(sql: "DELETE FROM kept")
            let pending = try String.fetchAll(db, sql: "SELECT event FROM outbox ORDER BY seq")
            try db.execute(sql: "DELETE FROM outbox")
            var next: Int64 = 1
            for json in kept + pending {
                var event = try JSONDecoder().decode(Event.self, from: Data(json.utf8))
                event.seq = next
                next += 1
                try db.execute(sql: "INSERT INTO outbox (seq, event) VALUES (?, ?)",
                               arguments: [event.seq, String(decoding: try JSONEncoder().encode(event), as: UTF8.self)])
            }
            try db.execute(sql: "DELETE FROM state WHERE key = 'paging'")
            var state = try Self.state(db)
            state.lastSeq = next - 1
            state.acknowledgedSeq = 0
            state.cursor = nil
            state.signInRequired = false
            state.resentThrough = kept.isEmpty ? nil : Int64(kept.count)
            try Self.save(state, db)
            return kept.count
        }
    }

    /// A push after a sign-in was refused because an event's id is stored already: the old
    /// identity's events were not lost (the device had been signed out, its events kept), so
    /// those sent again leave the outbox and the rest is numbered on from what the service
    /// acknowledged. False, changing nothing, when no event sent again waits.
    func dropResent() throws -> Bool {
        try database.write { db in
            var state = try Self.state(db)
            guard let resent = state.resentThrough else { return false }
            try db.execute(sql: "DELETE FROM outbox WHERE seq <= ?", arguments: [resent])
            state.resentThrough = nil
            try Self.save(state, db)
            try Self.renumberOutbox(from: state.acknowledgedSeq + 1, db)
            return true
        }
    }

    /// Where a change stands here: waiting in the outbox (`nil`), or stored by the service at or
    /// before the account version given; throws for a change not known here.
    func storedVersion(of change: UUID) throws -> Int64? {
        try database.read { db in
            if let version = try Int64.fetchOne(db, sql: "SELECT version FROM stored WHERE event_id = ?", arguments: [change.uuidString]) {
                return version
            }
            let waiting = try String.fetchAll(db, sql: "SELECT event FROM outbox").contains {
                (try? JSONDecoder().decode(Event.self, from: Data($0.utf8)))?.id == change
            }
            guard waiting else { throw ClientStoreError.unknownChange(change) }
            return nil
        }
    }

    /// The service expects `seq` next (its answer to a push whose seqs do not continue what it
    /// holds: this device's storage was reset, or restored from a backup). The outbox's events,
    /// none of which it holds, are numbered anew from there, in order.
    func renumberPending(from seq: Int64) throws {
        // The service's number, checked before any arithmetic on it: the outbox holds far fewer
        // than 2^53 events, so a start inside the contract's range cannot overflow.
        guard Limits.seqRange.contains(seq) else { throw ClientStoreError.seqOutOfRange(seq) }
        try database.write { db in try Self.renumberOutbox(from: seq, db) }
    }

    /// The outbox's events numbered from `seq`, in order, ids and clocks kept; the device's last
    /// seq the last of them (or `seq - 1` when none waits).
    private static func renumberOutbox(from seq: Int64, _ db: Database) throws {
        let events = try String.fetchAll(db, sql: "SELECT event FROM outbox ORDER BY seq").map {
            try JSONDecoder().decode(Event.self, from: Data($0.utf8))
        }
        try db.execute(sql: "DELETE FROM outbox")
        var next = seq
        for var event in events {
            event.seq = next
            next += 1
            try db.execute(sql: "INSERT INTO outbox (seq, event) VALUES (?, ?)",
                           arguments: [event.seq, String(decoding: try JSONEncoder().encode(event), as: UTF8.self)])
        }
        var state = try Self.state(db)
        state.lastSeq = next - 1
        try Self.save(state, db)
    }

    /// Applies a pull's answer: the view (whole when `reset`), the cursor and the service's clock.
    ///
    /// A paged answer (`more`) is applied to a view kept apart (`paging`), with its cursor, so that
    /// an app killed between pages goes on where it stopped; the view `view()` answers with is
    /// replaced only by the last page's. Returns that view, or nil while pages are missing.
    func apply(reset: Bool, more: Bool, changes: ViewChanges, cursor: String, serviceClock: HLCTimestamp,
               physicalMillis: Int64) throws -> DeviceView? {
        try database.write { db in
            let before = reset
                ? DeviceView.empty
                : try (Self.load(StoredView.self, "paging", db) ?? Self.load(StoredView.self, "view", db))?.view ?? .empty
            let view = before.applying(changes)
            if more {
                try Self.save(StoredView(view), "paging", db)
            } else {
                try Self.save(StoredView(view), "view", db)
                try db.execute(sql: "DELETE FROM state WHERE key = 'paging'")
            }
            var state = try Self.state(db)
            state.cursor = cursor
            var clock = HybridLogicalClock(last: state.clock)
            clock.receive(serviceClock, physicalMillis: physicalMillis)
            state.clock = clock.last
            try Self.save(state, db)
            return more ? nil : view
        }
    }
}

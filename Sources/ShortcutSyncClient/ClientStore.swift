import Foundation
import GRDB
import ShortcutSyncDomain

/// What a client keeps on the device, in one SQLite file: the outbox of events not yet accepted
/// by the service, the device's clock and seq, and the last view with its cursor.
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
    /// they leave the outbox, and `stored` remembers that version for each (the newest
    /// `storedChangesKept`).
    func acknowledge(through seq: Int64, version: Int64) throws {
        try database.write { db in
            let acknowledged = try String.fetchAll(db, sql: "SELECT event FROM outbox WHERE seq <= ? ORDER BY seq", arguments: [seq]).map {
                try JSONDecoder().decode(Event.self, from: Data($0.utf8))
            }
            for event in acknowledged {
                try db.execute(sql: "INSERT OR REPLACE INTO stored (event_id, version) VALUES (?, ?)", arguments: [event.id.uuidString, version])
            }
            try db.execute(sql: "DELETE FROM stored WHERE rowid <= (SELECT max(rowid) FROM stored) - ?", arguments: [Self.storedChangesKept])
            try db.execute(sql: "DELETE FROM outbox WHERE seq <= ?", arguments: [seq])
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
        try database.write { db in
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

import Foundation
import PostgresNIO
import ShortcutSyncDomain

/// The common pull in one prepared statement: a device that holds its view at a version (its
/// cursor's) asks what changed after it, or one that holds nothing asks for all of it (`reset`,
/// the whole-view pull of a new device, or after a reset of its cursor). It reads, in one snapshot and one round trip, what the
/// pull of `ProjectionStore` reads in a read-only transaction of four statements: the head (the
/// account's epoch: the projection's plus the account's promotions, `ProjectionStore.pull`; the
/// account's version and clock, the device's apps, the histories of the answer's and the cursor's
/// versions), the device's last
/// seq, and the first shortcut and voice shortcut rows after the cursor's version, at most
/// `limit` of each. `ProjectionStore.pullInOneStatement` checks the cursor against the head it
/// read and says whether those rows are enough for the page; when not, the pull goes the
/// transactional way.
///
/// Measured with `wrk` (32 connections pulling a one-shortcut diff, release build): the four
/// statements, each a round trip of its own between `BEGIN` and `COMMIT`, cost the service
/// 1.3–1.5 ms of CPU and PostgreSQL 1.3–1.4 ms per pull, more than a push; with this statement,
/// 0.75–0.86 ms and 0.53–0.59 ms, and twice the pulls a second (docs/benchmarks.md; less again
/// with the record that follows it prepared, `DeviceSyncStore.recordPull`).
struct PullStatement: PostgresPreparedStatement {
    static let name = "Pull.changesAfter"

    // The parts are told apart by their first column; the outer order keeps each part's rows in
    // its index order (`projection_shortcuts_changes`, `projection_voice_shortcuts_changes`).
    // The head's last two columns are its history values (migration 0027): of the answer's
    // version (the head's when the projection is at the head's version; NULL when behind it, and
    // the pull goes the transactional way), and of the cursor's version `$3` (the head's when it
    // is the head's version, else that of its event, `events e`, joined by `(account_id,
    // version)`: one probe of `events_stream_version_key`; NULL when the event is gone). Version
    // 0 is the empty view in every history: 0.
    static let sql = """
        SELECT 0, a.version, NULL::text, NULL::text, NULL::uuid, NULL::text,
               c.epoch + coalesce(h.promotions, 0), a.max_hlc_wall, a.max_hlc_counter, d.installed, d.apps_version,
               CASE WHEN coalesce(a.version, 0) = 0 THEN 0 WHEN a.version = h.version THEN h.history END,
               CASE WHEN $3 = 0 THEN 0 WHEN $3 = h.version THEN h.history ELSE e.history END
        FROM projection_checkpoint c
        LEFT JOIN projection_accounts a ON a.account_id = $1
        LEFT JOIN projection_devices d ON d.account_id = $1 AND d.device_id = $2
        LEFT JOIN account_heads h ON h.account_id = $1
        LEFT JOIN events e ON e.account_id = $1 AND e.version = $3
        WHERE c.name = 'live'
        UNION ALL
        (SELECT 1, seq, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
         FROM events WHERE account_id = $1 AND device_id = $2 ORDER BY seq DESC LIMIT 1)
        UNION ALL
        (SELECT 2, version, bundle_id, identifier, NULL, view::text, NULL, NULL, NULL, NULL, NULL, NULL, NULL
         FROM projection_shortcuts WHERE account_id = $1 AND version > $3 AND (view IS NOT NULL OR version > $5)
         ORDER BY version, bundle_id, identifier LIMIT $4)
        UNION ALL
        (SELECT 3, version, NULL, NULL, voice_shortcut_id, view::text, NULL, NULL, NULL, NULL, NULL, NULL, NULL
         FROM projection_voice_shortcuts WHERE account_id = $1 AND version > $3 AND (view IS NOT NULL OR version > $5)
         ORDER BY version, voice_shortcut_id LIMIT $4)
        ORDER BY 1, 2, 3, 4, 5
        """

    static var bindingDataTypes: [PostgresDataType] { [.uuid, .uuid, .int8, .int8, .int8] }

    var account: UUID
    var device: UUID
    /// The version the device's view is complete at: every row changed after it (the page of
    /// `PullPage(completeAt:)`; a cursor inside a page goes the transactional way); 0 for a
    /// device that holds nothing.
    var after: Int64
    /// The most rows of each kind.
    var limit: Int
    /// Removals (tombstones) at or below this version are not read: `after` for a device whose
    /// view is complete there (every removal after it), `Int64.max` for one that holds nothing
    /// (a reset: no removal at all, as `PullPage(resetAt:)` at the head's version reads).
    var removalsAfter: Int64

    init(account: UUID, device: UUID, after: Int64, limit: Int) {
        self.init(account: account, device: device, after: after, limit: limit, removalsAfter: after)
    }

    init(account: UUID, device: UUID, after: Int64, limit: Int, removalsAfter: Int64) {
        self.account = account
        self.device = device
        self.after = after
        self.limit = limit
        self.removalsAfter = removalsAfter
    }

    /// The pull of a device that holds nothing: every existing row, no removal.
    static func reset(account: UUID, device: UUID, limit: Int) -> PullStatement {
        PullStatement(account: account, device: device, after: 0, limit: limit, removalsAfter: .max)
    }

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(account)
        bindings.append(device)
        bindings.append(after)
        bindings.append(Int64(limit))
        bindings.append(removalsAfter)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        var cells = CellReader(row)
        let part = try cells.next(Int32.self)
        let version = try cells.next(Int64?.self)
        let bundleId = try cells.next(String?.self), identifier = try cells.next(String?.self)
        let voiceShortcut = try cells.next(UUID?.self)
        let view = try cells.next(String?.self)
        let epoch = try cells.next(Int64?.self)
        let wall = try cells.next(Int64?.self), counter = try cells.next(Int64?.self)
        let installed = try cells.next([String]?.self)
        let appsVersion = try cells.next(Int64?.self)
        let history = try cells.next(Int64?.self), cursorHistory = try cells.next(Int64?.self)
        func required<T>(_ value: T?, _ column: String) throws -> T {
            guard let value else { throw StoreError.corruptRow("a pulled row (part \(part)) has no \(column)") }
            return value
        }
        switch part {
        case 0:
            return .head(epoch: try required(epoch, "epoch"), version: version ?? 0,
                         maxHLC: HLCTimestamp(wallMillis: wall ?? 0, counter: Int(counter ?? 0)),
                         installed: installed, appsVersion: appsVersion ?? 0, history: history, cursorHistory: cursorHistory)
        case 1:
            return .lastAcceptedSeq(try required(version, "seq"))
        case 2:
            return .shortcut(StoredPullRow(version: try required(version, "version"),
                                           key: ShortcutID(bundleId: try required(bundleId, "bundle_id"),
                                                           identifier: try required(identifier, "identifier")),
                                           json: view))
        case 3:
            return .voiceShortcut(StoredPullRow(version: try required(version, "version"),
                                                key: try required(voiceShortcut, "voice_shortcut_id"), json: view))
        default:
            throw StoreError.corruptRow("a pulled row has an unknown part \(part)")
        }
    }

    enum Row: Sendable {
        /// `history`: of `version`, nil when the projection is behind the head; `cursorHistory`:
        /// of the cursor's version, nil when unknown (`historiesSQL`).
        case head(epoch: Int64, version: Int64, maxHLC: HLCTimestamp, installed: [String]?, appsVersion: Int64,
                  history: Int64?, cursorHistory: Int64?)
        case lastAcceptedSeq(Int64)
        case shortcut(StoredPullRow<ShortcutID>)
        case voiceShortcut(StoredPullRow<UUID>)
    }
}

/// A projected row as read, its view still JSON (nil: removed).
struct StoredPullRow<Key: Sendable>: Sendable {
    var version: Int64
    var key: Key
    var json: String?
}

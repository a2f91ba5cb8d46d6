import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain
import Tracing

extension ProjectionStore {
    /// The most items a pull answers at once (DESIGN §5, "Bounded per person").
    public static let defaultPullPageSize = 1_000
    /// About the most bytes of views one pull answers: a page of the largest items the limits
    /// allow would otherwise be tens of megabytes.
    public static let defaultPullPageBytes = 4 << 20

    /// The pull of DESIGN §5 for one device: the account's rows, made visible to the device's
    /// installed apps, at most `pullPageSize` of them. A cursor that is missing, issued to another
    /// account or device, of another epoch, or made before the device reported other apps gets the
    /// whole view with `reset: true`, and so does one of another history (a restored backup: the
    /// history value of its version, migration 0027, is not the database's, or the database no
    /// longer knows it). The epoch a cursor carries is the account's: the live
    /// projection's (`projection_checkpoint`) plus the times a rebuild's promotion swapped the
    /// account's rows (`account_heads.promotions`, 0024), so that a cursor of the rows from before
    /// the account's swap resets as soon as the swap commits, while the promotion goes on with the
    /// other accounts (`ProjectionRebuilder.promote`). Both only grow: an epoch once given is never
    /// given again. Any other cursor gets exactly what changed after it, or, when it
    /// is a page's, goes on where that page stopped. `more` says that the answer stopped at its
    /// page size.
    public func pull(account: UUID, device: UUID, cursor: PullCursor?) async throws -> PullSnapshot {
        try await withStatementSpan("pull: read the view's changes", .select, "projection_items") {
            try await pool(for: account).withConnection { connection in
                if let snapshot = try await pullInOneStatement(account: account, device: device, cursor: cursor, on: connection) {
                    return snapshot
                }
                return try await pullInTransaction(account: account, device: device, cursor: cursor, on: connection)
            }
        }
    }

    /// Any pull, in a read-only transaction of four statements (a page read as it goes, so that
    /// the rows past its bytes are not taken).
    func pullInTransaction(account: UUID, device: UUID, cursor: PullCursor?, on connection: PostgresConnection) async throws -> PullSnapshot {
        try await connection.inTransaction(.readOnlySnapshot, logger: logger) { connection in
            try await pull(account: account, device: device, cursor: cursor, on: connection)
        }
    }

    /// The most rows of each kind the one-statement pull reads: a pull after a poke brings a few.
    static let oneStatementRows = 64

    /// `statement`'s rows by one call of `pull_changes` (`PullFunction`), on Citus: each part as
    /// the one statement reads it, in its order.
    func pullRowsByDistributedFunction(_ statement: PullStatement, on connection: PostgresConnection) async throws -> [PullStatement.Row] {
        let rows = try await connection.guardedQuery("""
            SELECT * FROM \(unescaped: PullFunction.name)(\(statement.account), \(statement.device), \(statement.after), \(Int64(statement.limit)),
                                                          \(statement.removalsAfter))
            """, logger: logger)
        var read: [PullStatement.Row] = []
        for try await row in rows { read.append(try statement.decodeRow(row)) }
        return read
    }

    /// The pull of a device whose cursor holds a complete view (the common pull, after a poke), or
    /// of one that holds nothing (no cursor, or one issued to another account or device: a
    /// reset, every existing row), in one statement (`PullStatement`); nil when it cannot be
    /// answered so: a cursor inside a page, a cursor the head read with it does not take (another
    /// epoch, other apps, ahead of the account), or more rows than the statement read. The rows
    /// make the same page as the transactional pull would (`page`), from the same snapshot.
    func pullInOneStatement(account: UUID, device: UUID, cursor: PullCursor?, on connection: PostgresConnection) async throws -> PullSnapshot? {
        guard cursor?.page == nil else { return nil }
        let resumed = cursor.flatMap { $0.account == account && $0.device == device ? $0 : nil }
        let limit = min(Self.oneStatementRows, pullPageSize) + 1
        let statement = resumed.map { PullStatement(account: account, device: device, after: $0.version, limit: limit) }
            ?? PullStatement.reset(account: account, device: device, limit: limit)
        let rows = try await writeRoute.form(on: connection, logger: logger) == .distributedFunction
            ? try await pullRowsByDistributedFunction(statement, on: connection)
            : try await connection.guardedExecute(statement, logger: logger)
        var head: (epoch: Int64, version: Int64, maxHLC: HLCTimestamp, installed: [String]?, appsVersion: Int64,
                   history: Int64?, cursorHistory: Int64?)?
        var lastAcceptedSeq: Int64 = 0
        var shortcuts: [StoredPullRow<ShortcutID>] = [], voiceShortcuts: [StoredPullRow<UUID>] = []
        for row in rows {
            switch row {
            case .head(let epoch, let version, let maxHLC, let installed, let appsVersion, let history, let cursorHistory):
                head = (epoch, version, maxHLC, installed, appsVersion, history, cursorHistory)
            case .lastAcceptedSeq(let seq): lastAcceptedSeq = seq
            case .shortcut(let row): shortcuts.append(row)
            case .voiceShortcut(let row): voiceShortcuts.append(row)
            }
        }
        guard let head else { throw StoreError.corruptRow("the live projection checkpoint is missing") }
        // A projection behind its head has no history value read here: the transactional way reads it.
        guard let history = head.history else { return nil }
        // A cursor that does not resume here is a reset, which these rows (read after its version,
        // its removals too) are not; the transactional way answers it.
        let start: PullPage
        if let resumed {
            let presumed = PullPage(completeAt: resumed.version)
            guard resumed.resumption(account: account, device: device, epoch: head.epoch, appsVersion: head.appsVersion,
                                     version: head.version, historyAtCursor: head.cursorHistory) == presumed else { return nil }
            start = presumed
        } else {
            start = PullPage(resetAt: head.version)
        }
        // The page's ask of `wanted` rows, from those read: all there are (fewer than read), or
        // as many as it asks; else the transactional way reads them.
        func taken<Key: PulledKey, View: Decodable>(_ rows: [StoredPullRow<Key>], _ wanted: Int, _ bytes: inout PageBytes) throws -> [PulledRow<Key, View>] {
            guard rows.count < limit || rows.count >= wanted else { throw NotEnoughRows() }
            let decoder = JSONDecoder()
            var taken: [PulledRow<Key, View>] = []
            for row in rows.prefix(wanted) {
                guard let row: PulledRow<Key, View> = try bytes.take(row, decoder: decoder) else { break }
                taken.append(row)
            }
            return taken
        }
        let read: (changes: ViewChanges, stop: PullPage?)
        do {
            read = try await page(from: start, version: head.version,
                                  shortcuts: { try taken(shortcuts, $2, &$3) }, voiceShortcuts: { try taken(voiceShortcuts, $2, &$3) })
        } catch is NotEnoughRows {
            return nil
        }
        return PullSnapshot(
            cursor: PullCursor(epoch: head.epoch, account: account, device: device, appsVersion: head.appsVersion, version: head.version,
                               history: history, page: read.stop),
            reset: resumed == nil, more: read.stop != nil,
            changes: read.changes.visible(toDeviceWith: head.installed.map(Set.init)),
            maxHLC: head.maxHLC, lastAcceptedSeq: lastAcceptedSeq)
    }

    /// The one-statement pull read fewer rows than its page asks for.
    private struct NotEnoughRows: Error {}

    /// The device's whole view now, pulled page after page (each page its own snapshot; applied
    /// in order they give the view of the last one): for operators, who want the whole view.
    public func deviceView(account: UUID, device: UUID) async throws -> DeviceView {
        var view = DeviceView.empty
        var cursor: PullCursor?
        while true {
            let page = try await pull(account: account, device: device, cursor: cursor)
            view = page.reset ? DeviceView.empty.applying(page.changes) : view.applying(page.changes)
            cursor = page.cursor
            if !page.more { return view }
        }
    }

    private func pull(account: UUID, device: UUID, cursor: PullCursor?, on connection: PostgresConnection) async throws -> PullSnapshot {
        // The history values (migration 0027) as `PullStatement` reads them: of the answer's
        // version, and of the cursor's (the head's, or its event's).
        let cursorVersion = cursor?.version ?? 0
        let head = try await writeRoute.form(on: connection, logger: logger) == .distributedFunction
            ? try await headByFastPathStatements(account: account, device: device, cursorVersion: cursorVersion, on: connection)
            : try await connection.guardedQuery("""
                SELECT c.epoch + coalesce(h.promotions, 0), a.version, a.max_hlc_wall, a.max_hlc_counter, d.installed, d.apps_version,
                       CASE WHEN coalesce(a.version, 0) = 0 THEN 0 WHEN a.version = h.version THEN h.history END,
                       CASE WHEN \(cursorVersion) = 0 THEN 0 WHEN \(cursorVersion) = h.version THEN h.history ELSE e.history END
                FROM projection_checkpoint c
                LEFT JOIN projection_accounts a ON a.account_id = \(account)
                LEFT JOIN projection_devices d ON d.account_id = \(account) AND d.device_id = \(device)
                LEFT JOIN account_heads h ON h.account_id = \(account)
                LEFT JOIN events e ON e.account_id = \(account) AND e.version = \(cursorVersion)
                WHERE c.name = 'live'
                """, logger: logger).decode((Int64, Int64?, Int64?, Int64?, [String]?, Int64?, Int64?, Int64?).self).collectAll().first
        guard let (epoch, storedVersion, wall, counter, installed, storedAppsVersion, headHistory, cursorHistory) = head else {
            throw StoreError.corruptRow("the live projection checkpoint is missing")
        }
        let version = storedVersion ?? 0
        let appsVersion = storedAppsVersion ?? 0
        // Where this answer starts: where the cursor's view is complete, or its page stopped.
        let start = cursor?.resumption(account: account, device: device, epoch: epoch, appsVersion: appsVersion, version: version,
                                       historyAtCursor: cursorHistory)
        // The projection behind its head (a fold to catch up): the history of its version is its event's.
        var history = headHistory
        if history == nil {
            history = try await connection.guardedQuery(
                "SELECT history FROM events WHERE account_id = \(account) AND version = \(version)",
                logger: logger).decode(Int64?.self).collectAll().first ?? nil
        }

        let read = try await page(
            from: start ?? PullPage(resetAt: version), version: version,
            shortcuts: { try await shortcutRows(account: account, after: $0, removalsAfter: $1, limit: $2, bytes: &$3, on: connection) },
            voiceShortcuts: { try await voiceShortcutRows(account: account, after: $0, removalsAfter: $1, limit: $2, bytes: &$3, on: connection) })
        let lastAcceptedSeq = try await connection.guardedQuery(
            "SELECT seq FROM events WHERE account_id = \(account) AND device_id = \(device) ORDER BY seq DESC LIMIT 1",
            logger: logger).decode(Int64.self).collectAll().first ?? 0

        return PullSnapshot(
            cursor: PullCursor(epoch: epoch, account: account, device: device, appsVersion: appsVersion, version: version,
                               history: history, page: read.stop),
            reset: start == nil,
            more: read.stop != nil,
            // The device's filter applies to what was read; `more` was decided by rows.
            changes: read.changes.visible(toDeviceWith: installed.map(Set.init)),
            maxHLC: HLCTimestamp(wallMillis: wall ?? 0, counter: Int(counter ?? 0)),
            lastAcceptedSeq: lastAcceptedSeq)
    }

    /// The head row of the transactional pull, on Citus: the join's tables read one by one, each
    /// a fast-path statement of one table (issue 66, item 1; the join is a router plan, made anew
    /// at every pull), in the pull's snapshot, and put together as the join puts them: the
    /// epoch with the account's promotions, the projection's version and clock, the device's
    /// apps, the history values of the answer's version and of the cursor's (the head's, or its
    /// event's). Nil without the live checkpoint.
    private func headByFastPathStatements(
        account: UUID, device: UUID, cursorVersion: Int64, on connection: PostgresConnection
    ) async throws -> (Int64, Int64?, Int64?, Int64?, [String]?, Int64?, Int64?, Int64?)? {
        guard let epoch = try await connection.guardedQuery("SELECT epoch::int8 FROM projection_checkpoint WHERE name = 'live'", logger: logger)
            .decode(Int64.self).collectAll().first else { return nil }
        let stored = try await connection.guardedQuery("""
            SELECT version::int8, max_hlc_wall::int8, max_hlc_counter::int8 FROM projection_accounts WHERE account_id = \(account)
            """, logger: logger).decode((Int64, Int64?, Int64?).self).collectAll().first
        let reported = try await connection.guardedQuery("""
            SELECT installed, apps_version::int8 FROM projection_devices WHERE account_id = \(account) AND device_id = \(device)
            """, logger: logger).decode(([String], Int64).self).collectAll().first
        let head = try await connection.guardedQuery("""
            SELECT version::int8, history::int8, promotions::int8 FROM account_heads WHERE account_id = \(account)
            """, logger: logger).decode((Int64, Int64?, Int64).self).collectAll().first
        let historyAtCursor: Int64?
        if cursorVersion == 0 {
            historyAtCursor = 0
        } else if let head, cursorVersion == head.0 {
            historyAtCursor = head.1
        } else {
            historyAtCursor = try await connection.guardedQuery("""
                SELECT history::int8 FROM events WHERE account_id = \(account) AND version = \(cursorVersion)
                """, logger: logger).decode(Int64?.self).collectAll().first ?? nil
        }
        let historyAtVersion: Int64? = if (stored?.0 ?? 0) == 0 { 0 } else if let head, stored?.0 == head.0 { head.1 } else { nil }
        return (epoch + (head?.2 ?? 0), stored?.0, stored?.1, stored?.2, reported?.0, reported?.1, historyAtVersion, historyAtCursor)
    }

    /// Reads rows of one kind for a page: after a position, tombstones only above a version, at
    /// most a number of them, while the page has bytes left.
    typealias RowReader<Key: Hashable & Sendable, View> = (PullPosition<Key>, Int64, Int, inout PageBytes) async throws -> [PulledRow<Key, View>]

    /// At most `pullPageSize` rows and about `pullPageBytes` of views after `start`, shortcuts
    /// first, from one snapshot (its account version `version`); `stop` says where the page
    /// stopped, nil when no row is left after it.
    private func page(
        from start: PullPage, version: Int64,
        shortcuts readShortcuts: RowReader<ShortcutID, ShortcutView>, voiceShortcuts readVoiceShortcuts: RowReader<UUID, VoiceShortcutView>
    ) async throws -> (changes: ViewChanges, stop: PullPage?) {
        var changes = ViewChanges()
        var stop = start
        var budget = pullPageSize
        var bytes = PageBytes(left: pullPageBytes)
        // One row beyond the budget tells whether more follow.
        let shortcuts = try await readShortcuts(start.shortcuts, start.removalsAfter, budget + 1, &bytes)
        let shortcutsTaken = shortcuts.prefix(budget)
        changes.append(shortcuts: shortcutsTaken)
        if shortcuts.count > budget || bytes.full {
            stop.shortcuts = shortcutsTaken.last.map { PullPosition(version: $0.version, key: $0.key) } ?? start.shortcuts
            return (changes, stop)
        }
        stop.shortcuts = PullPosition(version: version)
        budget -= shortcuts.count

        let voiceShortcuts = try await readVoiceShortcuts(start.voiceShortcuts, start.removalsAfter, budget + 1, &bytes)
        let voiceShortcutsTaken = voiceShortcuts.prefix(budget)
        changes.append(voiceShortcuts: voiceShortcutsTaken)
        if voiceShortcuts.count > budget || bytes.full {
            stop.voiceShortcuts = voiceShortcutsTaken.last.map { PullPosition(version: $0.version, key: $0.key) } ?? start.voiceShortcuts
            return (changes, stop)
        }
        return (changes, nil)
    }

    /// The account's whole view (every existing item) read on `connection`, unpaged: for
    /// operators' reports, never for a device's answer.
    func allRows(account: UUID, on connection: PostgresConnection) async throws -> ViewChanges {
        let start = PullPage(resetAt: Int64.max)
        var changes = ViewChanges()
        var bytes = PageBytes(left: nil)
        changes.append(shortcuts: try await shortcutRows(account: account, after: start.shortcuts, removalsAfter: start.removalsAfter,
                                                         limit: nil, bytes: &bytes, on: connection)[...])
        changes.append(voiceShortcuts: try await voiceShortcutRows(account: account, after: start.voiceShortcuts,
                                                                   removalsAfter: start.removalsAfter, limit: nil, bytes: &bytes, on: connection)[...])
        return changes
    }

    /// Projected shortcut rows after `position` in `(version, bundle_id, identifier)` order,
    /// tombstones only above `removalsAfter`; all when `limit` is nil.
    private func shortcutRows(
        account: UUID, after position: PullPosition<ShortcutID>, removalsAfter: Int64, limit: Int?, bytes: inout PageBytes,
        on connection: PostgresConnection
    ) async throws -> [PulledRow<ShortcutID, ShortcutView>] {
        let query = Self.shortcutRowsQuery(account: account, after: position, removalsAfter: removalsAfter, limit: limit)
        let decoder = JSONDecoder()
        var rows: [PulledRow<ShortcutID, ShortcutView>] = []
        for try await (version, bundleId, identifier, json) in try await connection.guardedQuery(query, logger: logger)
            .decode((Int64, String, String, String?).self) {
            let stored = StoredPullRow(version: version, key: ShortcutID(bundleId: bundleId, identifier: identifier), json: json)
            guard let row: PulledRow<ShortcutID, ShortcutView> = try bytes.take(stored, decoder: decoder) else { break }
            rows.append(row)
        }
        return rows
    }

    /// The statement of `shortcutRows`: a range scan of the `projection_shortcuts_changes` index
    /// `(account_id, version, bundle_id, identifier)` that stops after `limit` rows, no sort.
    static func shortcutRowsQuery(account: UUID, after position: PullPosition<ShortcutID>, removalsAfter: Int64, limit: Int?) -> PostgresQuery {
        if let key = position.key {
            """
            SELECT version, bundle_id, identifier, view::text FROM projection_shortcuts
            WHERE account_id = \(account) AND (version, bundle_id, identifier) > (\(position.version), \(key.bundleId), \(key.identifier))
              AND (view IS NOT NULL OR version > \(removalsAfter))
            ORDER BY version, bundle_id, identifier LIMIT \(limit)
            """
        } else {
            """
            SELECT version, bundle_id, identifier, view::text FROM projection_shortcuts
            WHERE account_id = \(account) AND version > \(position.version) AND (view IS NOT NULL OR version > \(removalsAfter))
            ORDER BY version, bundle_id, identifier LIMIT \(limit)
            """
        }
    }

    /// Projected voice shortcut rows after `position` in `(version, voice_shortcut_id)` order,
    /// tombstones only above `removalsAfter`; all when `limit` is nil.
    private func voiceShortcutRows(
        account: UUID, after position: PullPosition<UUID>, removalsAfter: Int64, limit: Int?, bytes: inout PageBytes,
        on connection: PostgresConnection
    ) async throws -> [PulledRow<UUID, VoiceShortcutView>] {
        let query = Self.voiceShortcutRowsQuery(account: account, after: position, removalsAfter: removalsAfter, limit: limit)
        let decoder = JSONDecoder()
        var rows: [PulledRow<UUID, VoiceShortcutView>] = []
        for try await (version, id, json) in try await connection.guardedQuery(query, logger: logger).decode((Int64, UUID, String?).self) {
            guard let row: PulledRow<UUID, VoiceShortcutView> = try bytes.take(StoredPullRow(version: version, key: id, json: json),
                                                                             decoder: decoder) else { break }
            rows.append(row)
        }
        return rows
    }

    /// The statement of `voiceShortcutRows`: a range scan of the `projection_voice_shortcuts_changes`
    /// index `(account_id, version, voice_shortcut_id)` that stops after `limit` rows, no sort.
    static func voiceShortcutRowsQuery(account: UUID, after position: PullPosition<UUID>, removalsAfter: Int64, limit: Int?) -> PostgresQuery {
        if let key = position.key {
            """
            SELECT version, voice_shortcut_id, view::text FROM projection_voice_shortcuts
            WHERE account_id = \(account) AND (version, voice_shortcut_id) > (\(position.version), \(key))
              AND (view IS NOT NULL OR version > \(removalsAfter))
            ORDER BY version, voice_shortcut_id LIMIT \(limit)
            """
        } else {
            """
            SELECT version, voice_shortcut_id, view::text FROM projection_voice_shortcuts
            WHERE account_id = \(account) AND version > \(position.version) AND (view IS NOT NULL OR version > \(removalsAfter))
            ORDER BY version, voice_shortcut_id LIMIT \(limit)
            """
        }
    }
}

/// One projected row as a pull reads it: its version, its key, and its view (nil: removed).
struct PulledRow<Key, View> {
    var version: Int64
    var key: Key
    var view: View?
}

/// What a row costs a page's bytes besides its view: its key.
protocol PulledKey {
    var pulledBytes: Int { get }
}

extension ShortcutID: PulledKey {
    var pulledBytes: Int { bundleId.utf8.count + identifier.utf8.count }
}

extension UUID: PulledKey {
    var pulledBytes: Int { 36 }
}

extension PageBytes {
    /// `row` with its view decoded, when the page has room for it (its view and its key); nil
    /// when it does not.
    mutating func take<Key: PulledKey, View: Decodable>(_ row: StoredPullRow<Key>, decoder: JSONDecoder) throws -> PulledRow<Key, View>? {
        guard take((row.json?.utf8.count ?? 0) + row.key.pulledBytes) else { return nil }
        return PulledRow(version: row.version, key: row.key, view: try row.json.map { try decoder.decodeView(View.self, $0) })
    }
}

extension ViewChanges {
    fileprivate mutating func append(shortcuts rows: ArraySlice<PulledRow<ShortcutID, ShortcutView>>) {
        for row in rows {
            if let view = row.view { upsertedShortcuts.append(view) } else { removedShortcuts.append(row.key) }
        }
    }

    fileprivate mutating func append(voiceShortcuts rows: ArraySlice<PulledRow<UUID, VoiceShortcutView>>) {
        for row in rows {
            if let view = row.view { upsertedVoiceShortcuts.append(view) } else { removedVoiceShortcuts.append(row.key) }
        }
    }
}

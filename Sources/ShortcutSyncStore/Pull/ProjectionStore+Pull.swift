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
    /// whole view with `reset: true`; any other gets exactly what changed after it, or, when it
    /// is a page's, goes on where that page stopped. `more` says that the answer stopped at its
    /// page size.
    public func pull(account: UUID, device: UUID, cursor: PullCursor?) async throws -> PullSnapshot {
        try await withStatementSpan("pull: read the view's changes", .select, "projection_items") {
            try await client.withConnection { connection in
                try await connection.inTransaction(.readOnlySnapshot, logger: logger) { connection in
                    try await pull(account: account, device: device, cursor: cursor, on: connection)
                }
            }
        }
    }

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
        let head = try await connection.guardedQuery("""
            SELECT c.epoch, a.version, a.max_hlc_wall, a.max_hlc_counter, d.installed, d.apps_version
            FROM projection_checkpoint c
            LEFT JOIN projection_accounts a ON a.account_id = \(account)
            LEFT JOIN projection_devices d ON d.account_id = \(account) AND d.device_id = \(device)
            WHERE c.name = 'live'
            """, logger: logger).decode((Int64, Int64?, Int64?, Int64?, [String]?, Int64?).self).collectAll()
        guard let (epoch, storedVersion, wall, counter, installed, storedAppsVersion) = head.first else {
            throw StoreError.corruptRow("the live projection checkpoint is missing")
        }
        let version = storedVersion ?? 0
        let appsVersion = storedAppsVersion ?? 0
        // Where this answer starts: where the cursor's view is complete, or its page stopped.
        let start = cursor?.resumption(account: account, device: device, epoch: epoch, appsVersion: appsVersion, version: version)

        let read = try await page(account: account, from: start ?? PullPage(resetAt: version), version: version, on: connection)
        let lastAcceptedSeq = try await connection.guardedQuery(
            "SELECT seq FROM events WHERE account_id = \(account) AND device_id = \(device) ORDER BY seq DESC LIMIT 1",
            logger: logger).decode(Int64.self).collectAll().first ?? 0

        return PullSnapshot(
            cursor: PullCursor(epoch: epoch, account: account, device: device, appsVersion: appsVersion, version: version,
                               page: read.stop),
            reset: start == nil,
            more: read.stop != nil,
            // The device's filter applies to what was read; `more` was decided by rows.
            changes: read.changes.visible(toDeviceWith: installed.map(Set.init)),
            maxHLC: HLCTimestamp(wallMillis: wall ?? 0, counter: Int(counter ?? 0)),
            lastAcceptedSeq: lastAcceptedSeq)
    }

    /// At most `pullPageSize` rows and about `pullPageBytes` of views after `start`, shortcuts first, in a snapshot at account
    /// `version`; `stop` says where the page stopped, nil when no row is left after it.
    private func page(account: UUID, from start: PullPage, version: Int64, on connection: PostgresConnection) async throws
        -> (changes: ViewChanges, stop: PullPage?) {
        var changes = ViewChanges()
        var stop = start
        var budget = pullPageSize
        var bytes = PageBytes(left: pullPageBytes)
        // One row beyond the budget tells whether more follow.
        let shortcuts = try await shortcutRows(account: account, after: start.shortcuts, removalsAfter: start.removalsAfter,
                                               limit: budget + 1, bytes: &bytes, on: connection)
        let shortcutsTaken = shortcuts.prefix(budget)
        changes.append(shortcuts: shortcutsTaken)
        if shortcuts.count > budget || bytes.full {
            stop.shortcuts = shortcutsTaken.last.map { PullPosition(version: $0.version, key: $0.key) } ?? start.shortcuts
            return (changes, stop)
        }
        stop.shortcuts = PullPosition(version: version)
        budget -= shortcuts.count

        let voiceShortcuts = try await voiceShortcutRows(account: account, after: start.voiceShortcuts, removalsAfter: start.removalsAfter,
                                                         limit: budget + 1, bytes: &bytes, on: connection)
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
            guard bytes.take((json?.utf8.count ?? 0) + bundleId.utf8.count + identifier.utf8.count) else { break }
            rows.append(PulledRow(version: version, key: ShortcutID(bundleId: bundleId, identifier: identifier),
                                  view: try json.map { try decoder.decodeView(ShortcutView.self, $0) }))
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
            guard bytes.take((json?.utf8.count ?? 0) + 36) else { break }
            rows.append(PulledRow(version: version, key: id, view: try json.map { try decoder.decodeView(VoiceShortcutView.self, $0) }))
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
private struct PulledRow<Key, View> {
    var version: Int64
    var key: Key
    var view: View?
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

import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// Which set of projection tables a fold writes: the live ones, or the rebuild beside them.
enum ProjectionTables: Sendable, Hashable {
    case live
    case rebuild

    /// Prefixed to the table names. The live tables stay unqualified, in the schema of the events.
    var prefix: String {
        switch self {
        case .live: ""
        case .rebuild: "rebuild."
        }
    }
}

/// Folds batches of the log into one set of projection tables.
///
/// The live worker and a rebuild run exactly this code, so a rebuild proves the live fold.
struct ProjectionFolder: Sendable {
    let tables: ProjectionTables
    let logger: Logger

    /// The tables' checkpoint, read through the pool.
    func checkpoint(_ client: PostgresClient) async throws -> ProjectionCheckpoint {
        let rows = try await client.query(
            "SELECT tx_id::text::int8, position, epoch FROM \(unescaped: tables.prefix)projection_checkpoint WHERE name = 'live'",
            logger: logger)
        return try await Self.decodeCheckpoint(rows)
    }

    /// The tables' checkpoint, read on `connection`; locked until the transaction ends when `forUpdate`.
    func checkpoint(on connection: PostgresConnection, forUpdate: Bool = false) async throws -> ProjectionCheckpoint {
        let rows = try await connection.guardedQuery("""
            SELECT tx_id::text::int8, position, epoch FROM \(unescaped: tables.prefix)projection_checkpoint
            WHERE name = 'live' \(unescaped: forUpdate ? "FOR UPDATE" : "")
            """, logger: logger)
        return try await Self.decodeCheckpoint(rows)
    }

    private static func decodeCheckpoint(_ rows: PostgresRowSequence) async throws -> ProjectionCheckpoint {
        for try await (txid, position, epoch) in rows.decode((Int64, Int64, Int64).self) {
            return ProjectionCheckpoint(log: LogCheckpoint(transactionID: UInt64(txid), position: position), epoch: epoch)
        }
        throw StoreError.corruptRow("the projection checkpoint row is missing")
    }

    /// Folds `events` (consecutive in log order, right after `from`) in one transaction; see `ProjectionStore.apply`.
    func apply(_ events: [RecordedEvent], from: LogCheckpoint, on connection: PostgresConnection, notify: Bool) async throws -> [ProjectionNotification] {
        guard let last = events.last else { return [] }
        return try await connection.inTransaction(logger: logger) { connection in
            let current = try await checkpoint(on: connection, forUpdate: true)
            guard current.log == from else {
                throw ProjectionError.checkpointMoved(expected: from, found: current.log)
            }
            let byAccount = Dictionary(grouping: events, by: \.accountId)
            let stored = try await loadAccounts(Array(byAccount.keys), on: connection)

            var writes = ProjectionWrites()
            var notifications: [ProjectionNotification] = []
            for (account, accountEvents) in byAccount.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
                let before = stored[account] ?? StoredAccount(version: 0, state: AccountState())
                var state = before.state
                for event in accountEvents { state.apply(event.accepted) }
                guard state != before.state else { continue }

                // One row per item and account: the changes of the account's whole view. Each
                // device's installed apps filter it when the device pulls.
                let changes = state.accountView.changes(since: before.state.accountView)
                let version = changes.isEmpty ? before.version : before.version + 1
                try writes.add(changes, account: account, version: version)
                let appsBefore = before.state.reportedApps
                let appsChanged = state.reportedApps.filter { appsBefore[$0.key] != $0.value }
                for (device, installed) in appsChanged {
                    writes.add(device: device, account: account, installed: installed)
                }
                try writes.add(account: account, version: version, state: state)
                if !changes.isEmpty || !appsChanged.isEmpty {
                    notifications.append(ProjectionNotification(
                        accountId: account, version: version, position: accountEvents.map(\.position).max()!))
                }
            }

            try await write(writes, on: connection)
            try await connection.guardedQuery("""
                UPDATE \(unescaped: tables.prefix)projection_checkpoint
                SET tx_id = \(String(last.transactionID))::xid8, position = \(last.position), updated_at = now()
                WHERE name = 'live'
                """, logger: logger)
            if notify && !notifications.isEmpty {
                let encoder = JSONEncoder()
                let payloads = try notifications.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
                try await connection.guardedQuery(
                    "SELECT pg_notify(\(ProjectionNotification.channel), payload) FROM unnest(\(payloads)::text[]) AS payload",
                    logger: logger).drain()
            }
            return notifications
        }
    }

    struct StoredAccount {
        var version: Int64
        var state: AccountState
    }

    /// The fold states of the accounts, locked for this transaction; missing accounts have none yet.
    private func loadAccounts(_ accounts: [UUID], on connection: PostgresConnection) async throws -> [UUID: StoredAccount] {
        let rows = try await connection.guardedQuery("""
            SELECT account_id, version, state::text FROM \(unescaped: tables.prefix)projection_accounts
            WHERE account_id = ANY(\(accounts)) FOR UPDATE
            """, logger: logger)
        let decoder = JSONDecoder()
        var stored: [UUID: StoredAccount] = [:]
        for try await (account, version, json) in rows.decode((UUID, Int64, String).self) {
            do {
                stored[account] = StoredAccount(version: version, state: try decoder.decode(AccountState.self, from: Data(json.utf8)))
            } catch {
                throw StoreError.corruptRow("the projection state of account \(account): \(error)")
            }
        }
        return stored
    }

    /// Every row of the batch, one multi-row statement per table.
    private func write(_ writes: ProjectionWrites, on connection: PostgresConnection) async throws {
        let p = tables.prefix
        let accounts = writes.accounts
        if !accounts.ids.isEmpty {
            try await connection.guardedQuery("""
                INSERT INTO \(unescaped: p)projection_accounts (account_id, version, state, max_hlc_wall, max_hlc_counter)
                SELECT a.account_id, a.version, a.state::jsonb, a.wall, a.counter
                FROM unnest(\(accounts.ids)::uuid[], \(accounts.versions)::int8[], \(accounts.states)::text[],
                            \(accounts.walls)::int8[], \(accounts.counters)::int8[])
                     AS a(account_id, version, state, wall, counter)
                ON CONFLICT (account_id) DO UPDATE SET
                    version = excluded.version, state = excluded.state, max_hlc_wall = excluded.max_hlc_wall,
                    max_hlc_counter = excluded.max_hlc_counter
                """, logger: logger)
        }
        let devices = writes.devices
        if !devices.ids.isEmpty {
            try await connection.guardedQuery("""
                INSERT INTO \(unescaped: p)projection_devices (account_id, device_id, installed, apps_version)
                SELECT d.account_id, d.device_id, d.installed::text[], 1
                FROM unnest(\(devices.accounts)::uuid[], \(devices.ids)::uuid[], \(devices.installed)::text[])
                     AS d(account_id, device_id, installed)
                ON CONFLICT (account_id, device_id) DO UPDATE SET
                    installed = excluded.installed, apps_version = \(unescaped: p)projection_devices.apps_version + 1
                """, logger: logger)
        }
        let shortcuts = writes.shortcuts
        if !shortcuts.accounts.isEmpty {
            try await connection.guardedQuery("""
                INSERT INTO \(unescaped: p)projection_shortcuts (account_id, bundle_id, identifier, view, version)
                SELECT r.account_id, r.bundle_id, r.identifier, CASE WHEN r.removed THEN NULL ELSE r.view::jsonb END, r.version
                FROM unnest(\(shortcuts.accounts)::uuid[], \(shortcuts.bundleIds)::text[], \(shortcuts.identifiers)::text[],
                            \(shortcuts.views)::text[], \(shortcuts.removed)::bool[], \(shortcuts.versions)::int8[])
                     AS r(account_id, bundle_id, identifier, view, removed, version)
                ON CONFLICT (account_id, bundle_id, identifier) DO UPDATE SET
                    view = excluded.view, version = excluded.version
                """, logger: logger)
        }
        let voices = writes.voiceShortcuts
        if !voices.accounts.isEmpty {
            try await connection.guardedQuery("""
                INSERT INTO \(unescaped: p)projection_voice_shortcuts (account_id, voice_shortcut_id, view, version)
                SELECT r.account_id, r.voice_shortcut_id, CASE WHEN r.removed THEN NULL ELSE r.view::jsonb END, r.version
                FROM unnest(\(voices.accounts)::uuid[], \(voices.ids)::uuid[], \(voices.views)::text[],
                            \(voices.removed)::bool[], \(voices.versions)::int8[])
                     AS r(account_id, voice_shortcut_id, view, removed, version)
                ON CONFLICT (account_id, voice_shortcut_id) DO UPDATE SET
                    view = excluded.view, version = excluded.version
                """, logger: logger)
        }
    }
}

/// The rows one batch writes, as the column arrays of `unnest`.
struct ProjectionWrites {
    struct Accounts {
        var ids: [UUID] = [], versions: [Int64] = [], states: [String] = []
        var walls: [Int64] = [], counters: [Int64] = []
    }

    struct Devices {
        var accounts: [UUID] = [], ids: [UUID] = []
        /// Array literals (`{"a","b"}`), cast to text[] per row: unnest cannot take an array of arrays.
        var installed: [String] = []
    }

    struct Shortcuts {
        var accounts: [UUID] = [], bundleIds: [String] = [], identifiers: [String] = []
        var views: [String] = [], removed: [Bool] = [], versions: [Int64] = []
    }

    struct VoiceShortcuts {
        var accounts: [UUID] = [], ids: [UUID] = []
        var views: [String] = [], removed: [Bool] = [], versions: [Int64] = []
    }

    var accounts = Accounts()
    var devices = Devices()
    var shortcuts = Shortcuts()
    var voiceShortcuts = VoiceShortcuts()
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    mutating func add(account: UUID, version: Int64, state: AccountState) throws {
        accounts.ids.append(account)
        accounts.versions.append(version)
        accounts.states.append(try json(state))
        accounts.walls.append(state.maxHLC.wallMillis)
        accounts.counters.append(Int64(state.maxHLC.counter))
    }

    /// A device's new set of installed apps.
    mutating func add(device: UUID, account: UUID, installed: Set<String>) {
        devices.accounts.append(account)
        devices.ids.append(device)
        let quoted = installed.sorted().map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
        devices.installed.append("{" + quoted.joined(separator: ",") + "}")
    }

    mutating func add(_ changes: ViewChanges, account: UUID, version: Int64) throws {
        for view in changes.upsertedShortcuts {
            try addShortcut(account: account, id: view.shortcutID, view: view, version: version)
        }
        for id in changes.removedShortcuts {
            try addShortcut(account: account, id: id, view: nil, version: version)
        }
        for view in changes.upsertedVoiceShortcuts {
            try addVoiceShortcut(account: account, id: view.voiceShortcutId, view: view, version: version)
        }
        for id in changes.removedVoiceShortcuts {
            try addVoiceShortcut(account: account, id: id, view: nil, version: version)
        }
    }

    private mutating func addShortcut(account: UUID, id: ShortcutID, view: ShortcutView?, version: Int64) throws {
        shortcuts.accounts.append(account)
        shortcuts.bundleIds.append(id.bundleId)
        shortcuts.identifiers.append(id.identifier)
        shortcuts.views.append(try view.map { try json($0) } ?? "")
        shortcuts.removed.append(view == nil)
        shortcuts.versions.append(version)
    }

    private mutating func addVoiceShortcut(account: UUID, id: UUID, view: VoiceShortcutView?, version: Int64) throws {
        voiceShortcuts.accounts.append(account)
        voiceShortcuts.ids.append(id)
        voiceShortcuts.views.append(try view.map { try json($0) } ?? "")
        voiceShortcuts.removed.append(view == nil)
        voiceShortcuts.versions.append(version)
    }

    private func json(_ value: some Encodable) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

extension PostgresRowSequence {
    /// Reads and drops every row, so the statement has surely run to its end.
    func drain() async throws {
        for try await _ in self {}
    }
}

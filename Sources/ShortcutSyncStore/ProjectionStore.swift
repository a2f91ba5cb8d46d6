import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// How far the projections have folded the log, and which generation of them is live.
public struct ProjectionCheckpoint: Sendable, Hashable {
    public var log: LogCheckpoint
    /// Raised when the projections are replaced by a rebuild; older cursors then get the whole view.
    public var epoch: Int64

    public init(log: LogCheckpoint, epoch: Int64) {
        self.log = log
        self.epoch = epoch
    }
}

/// One device's pull (DESIGN §5), read from one consistent snapshot.
public struct PullSnapshot: Sendable {
    /// The epoch, the device's apps version and the account version this answer brings the device to.
    public var cursor: PullCursor
    /// True when `changes` is the whole view, to replace what the device holds.
    public var reset: Bool
    public var changes: ViewChanges
    /// The greatest hlc the account has seen (zero if none), for the device's clock.
    public var maxHLC: HLCTimestamp
    /// The device's greatest accepted seq.
    public var lastAcceptedSeq: Int64
}

/// Why the projections refused to go on.
public enum ProjectionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The checkpoint is not where the batch starts: another writer moved it. Nothing was written.
    case checkpointMoved(expected: LogCheckpoint, found: LogCheckpoint)
    /// The live projections did not reach the rebuild's checkpoint in time (is a worker running?).
    case liveProjectionsBehind(live: LogCheckpoint, rebuilt: LogCheckpoint)

    public var description: String {
        switch self {
        case .checkpointMoved(let expected, let found):
            "the projection checkpoint is at \(found), not at \(expected) where the batch starts: another worker moved it"
        case .liveProjectionsBehind(let live, let rebuilt):
            "the live projections stayed at \(live), behind the rebuild at \(rebuilt): is a worker running?"
        }
    }
}

/// The projections in PostgreSQL as pulls and operators read them (the worker folds them, through
/// `ProjectionRowStore`).
///
/// Items have one row per account, whatever the number of devices; a pull makes them visible to
/// the device's installed apps. Every changed row carries the account version that changed it
/// and a removed item stays as a tombstone, so a pull with a cursor reads exactly the rows above
/// the cursor's version.
public struct ProjectionStore: Sendable {
    public let client: PostgresClient
    public let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Where the live projections stand.
    public func checkpoint() async throws -> ProjectionCheckpoint {
        try await ProjectionRowStore(tables: .live, logger: logger).checkpoint(client)
    }

    /// Whether the account's views include log `position`: true unless the account has a
    /// committed event there that the projections have not folded yet. A position of another
    /// account, or of none, is included: there is nothing of this account to wait for.
    public func isProcessed(position: Int64, account: UUID) async throws -> Bool {
        guard position > 0 else { return true }
        return try await client.query("""
            SELECT NOT EXISTS (
                SELECT 1 FROM events e, projection_checkpoint c
                WHERE e.account_id = \(account) AND e.position = \(position) AND c.name = 'live'
                  AND (e.tx_id, e.position) > (c.tx_id, c.position))
            """, logger: logger).decode(Bool.self).collectAll().first ?? false
    }

    /// Where the worker stands, for `/readyz` and `admin projections status`: the checkpoint, the
    /// log's greatest position (committed or not), how many committed events wait to be folded,
    /// and how many accounts are parked (their events skipped until they fold again).
    public func status() async throws -> (checkpoint: ProjectionCheckpoint, headPosition: Int64, pendingEvents: Int64, parkedAccounts: Int64) {
        let rows = try await client.query("""
            SELECT c.tx_id::text::int8, c.position, c.epoch,
                   (SELECT coalesce(max(position), 0) FROM events),
                   (SELECT count(*) FROM events e WHERE (e.tx_id, e.position) > (c.tx_id, c.position)),
                   (SELECT count(*) FROM projection_parked_accounts)
            FROM projection_checkpoint c WHERE c.name = 'live'
            """, logger: logger)
        for try await (txid, position, epoch, head, pending, parked) in rows.decode((Int64, Int64, Int64, Int64, Int64, Int64).self) {
            let checkpoint = ProjectionCheckpoint(log: LogCheckpoint(transactionID: UInt64(txid), position: position), epoch: epoch)
            return (checkpoint: checkpoint, headPosition: head, pendingEvents: pending, parkedAccounts: parked)
        }
        throw StoreError.corruptRow("the live projection checkpoint is missing")
    }

    /// The greatest log position, committed or not: the head the worker's lag is measured against.
    public func headPosition() async throws -> Int64 {
        try await client.query("SELECT coalesce(max(position), 0) FROM events", logger: logger)
            .decode(Int64.self).collectAll().first ?? 0
    }

    /// The pull of DESIGN §5 for one device: the account's rows, made visible to the device's
    /// installed apps. A cursor that is missing, issued to another account or device, of another
    /// epoch, or made before the device reported other apps gets the whole view with
    /// `reset: true`; any other gets exactly what changed after it.
    public func pull(account: UUID, device: UUID, cursor: PullCursor?) async throws -> PullSnapshot {
        try await client.withConnection { connection in
            try await connection.inTransaction(.readOnlySnapshot, logger: logger) { connection in
                try await pull(account: account, device: device, cursor: cursor, on: connection)
            }
        }
    }

    private func pull(account: UUID, device: UUID, cursor: PullCursor?, on connection: PostgresConnection) async throws -> PullSnapshot {
        let head = try await connection.guardedQuery("""
            SELECT c.epoch, a.version, a.max_hlc_wall, a.max_hlc_counter, d.installed, d.apps_version, a.reset_version
            FROM projection_checkpoint c
            LEFT JOIN projection_accounts a ON a.account_id = \(account)
            LEFT JOIN projection_devices d ON d.account_id = \(account) AND d.device_id = \(device)
            WHERE c.name = 'live'
            """, logger: logger).decode((Int64, Int64?, Int64?, Int64?, [String]?, Int64?, Int64?).self).collectAll()
        guard let (epoch, storedVersion, wall, counter, installed, storedAppsVersion, resetVersion) = head.first else {
            throw StoreError.corruptRow("the live projection checkpoint is missing")
        }
        let version = storedVersion ?? 0
        let appsVersion = storedAppsVersion ?? 0
        let since: Int64? = if let cursor, cursor.account == account, cursor.device == device,
                                  cursor.epoch == epoch, cursor.appsVersion == appsVersion, cursor.version <= version,
                                  cursor.version >= resetVersion ?? 0 {
            cursor.version
        } else {
            nil
        }

        let changes = try await rows(account: account, changedAfter: since, on: connection)
        let lastAcceptedSeq = try await connection.guardedQuery(
            "SELECT coalesce(max(seq), 0) FROM events WHERE account_id = \(account) AND device_id = \(device)",
            logger: logger).decode(Int64.self).collectAll().first ?? 0

        return PullSnapshot(
            cursor: PullCursor(epoch: epoch, account: account, device: device, appsVersion: appsVersion, version: version),
            reset: since == nil,
            changes: changes.visible(toDeviceWith: installed.map(Set.init)),
            maxHLC: HLCTimestamp(wallMillis: wall ?? 0, counter: Int(counter ?? 0)),
            lastAcceptedSeq: lastAcceptedSeq)
    }

    /// The account's whole view as the live projections hold it (every app's items,
    /// `appInstalled` true), read in one snapshot.
    public func accountView(account: UUID) async throws -> DeviceView {
        try await client.withConnection { connection in
            try await connection.inTransaction(.readOnlySnapshot, logger: logger) { connection in
                DeviceView.empty.applying(try await rows(account: account, changedAfter: nil, on: connection))
            }
        }
    }

    /// The account's projected rows changed after version `since` (removals as such), or every
    /// existing one when `since` is nil.
    private func rows(account: UUID, changedAfter since: Int64?, on connection: PostgresConnection) async throws -> ViewChanges {
        var changes = ViewChanges()
        let decoder = JSONDecoder()
        let shortcuts = try await connection.guardedQuery("""
            SELECT bundle_id, identifier, view::text FROM projection_shortcuts
            WHERE account_id = \(account) AND version > \(since ?? -1) AND (view IS NOT NULL OR \(since != nil))
            """, logger: logger)
        for try await (bundleId, identifier, json) in shortcuts.decode((String, String, String?).self) {
            if let json {
                changes.upsertedShortcuts.append(try decoder.decodeView(ShortcutView.self, json))
            } else {
                changes.removedShortcuts.append(ShortcutID(bundleId: bundleId, identifier: identifier))
            }
        }
        let voiceShortcuts = try await connection.guardedQuery("""
            SELECT voice_shortcut_id, view::text FROM projection_voice_shortcuts
            WHERE account_id = \(account) AND version > \(since ?? -1) AND (view IS NOT NULL OR \(since != nil))
            """, logger: logger)
        for try await (id, json) in voiceShortcuts.decode((UUID, String?).self) {
            if let json {
                changes.upsertedVoiceShortcuts.append(try decoder.decodeView(VoiceShortcutView.self, json))
            } else {
                changes.removedVoiceShortcuts.append(id)
            }
        }
        return changes
    }
}

/// What a pull's cursor says: the view `device` of `account` had at account `version`, in
/// projection `epoch`, with the device's apps at `appsVersion` (0 before it reported any).
/// Devices hold it as opaque text, which the HTTP layer signs.
public struct PullCursor: Sendable, Hashable {
    public var epoch: Int64
    public var account: UUID
    public var device: UUID
    public var appsVersion: Int64
    public var version: Int64

    public init(epoch: Int64, account: UUID, device: UUID, appsVersion: Int64, version: Int64) {
        self.epoch = epoch
        self.account = account
        self.device = device
        self.appsVersion = appsVersion
        self.version = version
    }
}

extension JSONDecoder {
    /// Decodes a stored view, naming the row kind when it cannot.
    func decodeView<View: Decodable>(_ type: View.Type, _ json: String) throws -> View {
        do {
            return try decode(type, from: Data(json.utf8))
        } catch {
            throw StoreError.corruptRow("a stored \(View.self) cannot be decoded: \(error)")
        }
    }
}

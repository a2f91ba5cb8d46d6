import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// What one account's batch changed, written back in one round trip: the account's row, then
/// one data-modifying arm per table (each writes nothing when its arrays are empty). Every arm
/// writes only when `go` has its row: here always; in `AppendFoldedStatement`, which runs these
/// arms after its append, only when the append's check passed. A
/// projected shortcut is the event at its latest donation's version with its count and
/// `lastDonatedAt` added: the fold decides which donation that is, the row copies its attributes
/// (looked up by its version in a fenced `LATERAL` subquery, as `FoldReadStatement` reads: a
/// plan made without the arrays joined them to every event of the account). The deletion of
/// donation groups is still a join: a plan may read the account's groups for it, which only a
/// batch with a deletion that empties a group pays.
struct FoldWriteStatement<Tables: ProjectionTableSet>: PostgresPreparedStatement {
    static var sql: String { Tables.writeSQL }
    static var name: String { Tables.writeName }

    private var bindings: PostgresBindings
}

extension FoldWriteStatement {
    init(account: UUID, _ result: AccountBatchResult) throws {
        var bindings = PostgresBindings(capacity: 50)
        bindings.append(account)
        try Self.appendValues(of: result, unstored: .none, to: &bindings)
        self.bindings = bindings
    }

    func makeBindings() throws -> PostgresBindings { bindings }

    func decodeRow(_ row: PostgresRow) throws {}

    /// The statement's values after the account (`$2`…`$50`), in order. `unstored`: the events
    /// appended by the same statement (`AppendFoldedStatement`), which cannot read them back from
    /// the events table: a shortcut whose latest donation is one of them takes its attributes
    /// from here.
    static func appendValues(of result: AccountBatchResult, unstored: UnstoredEvents, to bindings: inout PostgresBindings) throws {
        bindings.append(result.version)
        bindings.append(result.maxHLC.wallMillis)
        bindings.append(Int64(result.maxHLC.counter))

        var gone = (bundles: [String](), identifiers: [String](), groups: [String]())
        var kept = (bundles: [String](), identifiers: [String](), groups: [String](),
                    counts: [Int64](), latest: [ByteBuffer](), versions: [Int64](), covered: [ByteBuffer](), habits: [ByteBuffer](),
                    compacted: [ByteBuffer]())
        // In key order, as every writer of these rows: fewer lock waits between writers.
        for (id, row) in result.groups.sorted(by: { $0.key < $1.key }) {
            if let row {
                kept.bundles.append(id.shortcut.bundleId)
                kept.identifiers.append(id.shortcut.identifier); kept.groups.append(id.group)
                kept.counts.append(Int64(row.count)); kept.latest.append(row.latest.stored)
                kept.versions.append(row.latestVersion); kept.covered.append(row.coveredBelow?.stored ?? ByteBuffer())
                kept.habits.append(row.habits.bytes.map { ByteBuffer(bytes: $0) } ?? ByteBuffer())
                kept.compacted.append(CompactionColumns.stored(compactedOf: row) ?? ByteBuffer())
            } else {
                gone.bundles.append(id.shortcut.bundleId)
                gone.identifiers.append(id.shortcut.identifier); gone.groups.append(id.group)
            }
        }
        bindings.append(gone.bundles); bindings.append(gone.identifiers); bindings.append(gone.groups)
        bindings.append(kept.bundles); bindings.append(kept.identifiers); bindings.append(kept.groups)
        bindings.append(kept.counts); bindings.append(kept.latest); bindings.append(kept.versions); bindings.append(kept.covered)

        var marks = StoredScopes()
        var keys: [ByteBuffer] = []
        for (scope, key) in result.marks {
            marks.append(scope)
            keys.append(key.stored)
        }
        for (shortcut, key) in result.forgottenShortcuts {
            marks.append(forgotten: shortcut)
            keys.append(key.stored)
        }
        bindings.append(marks.bundles); bindings.append(marks.scopes); bindings.append(marks.values); bindings.append(keys)

        var shortcuts = (bundles: [String](), identifiers: [String](), latest: [Int64](), counts: [Int64](),
                         bodies: [String](), walls: [Int64](), counters: [Int64](), keys: [ByteBuffer](), sums: [ByteBuffer]())
        for (shortcut, projection) in result.shortcuts.sorted(by: { $0.key < $1.key }) {
            shortcuts.bundles.append(shortcut.bundleId); shortcuts.identifiers.append(shortcut.identifier)
            // Version 0 holds no event: the shortcut left the view, its row becomes a tombstone.
            shortcuts.latest.append(projection?.latestVersion ?? 0)
            shortcuts.counts.append(Int64(projection?.donationCount ?? 0))
            let event = projection.flatMap { unstored.event(at: $0.latestVersion) }
            shortcuts.bodies.append(event?.body ?? "")
            shortcuts.walls.append(event?.hlc.wallMillis ?? 0)
            shortcuts.counters.append(Int64(event?.hlc.counter ?? 0))
            shortcuts.keys.append(projection?.latest.stored ?? ByteBuffer())
            shortcuts.sums.append(Self.stored(result.shortcutSums[shortcut]))
        }
        bindings.append(shortcuts.bundles); bindings.append(shortcuts.identifiers)
        bindings.append(shortcuts.latest); bindings.append(shortcuts.counts)

        var voices = VoiceShortcutColumns()
        for change in result.voiceShortcuts {
            try voices.append(change, version: change.viewChanged ? result.version : 0)
        }
        bindings.append(voices.ids); bindings.append(voices.views); bindings.append(voices.versions); bindings.append(voices.deleted)
        bindings.append(voices.targetKeys); bindings.append(voices.targetBundles); bindings.append(voices.targetIdentifiers)
        bindings.append(voices.targetTitles); bindings.append(voices.phraseKeys); bindings.append(voices.phrases)
        bindings.append(voices.normalized); bindings.append(voices.owners); bindings.append(voices.available)

        var devices = (ids: [UUID](), installed: [String](), keys: [ByteBuffer](), raises: [Int64]())
        for (device, change) in result.devices.sorted(by: { $0.key.isOrderedBefore($1.key) }) {
            devices.ids.append(device)
            devices.installed.append(ProjectionRowStore.arrayLiteral(change.reported.value.sorted()))
            devices.keys.append(change.reported.key.stored)
            devices.raises.append(change.appsChanged ? 1 : 0)
        }
        bindings.append(devices.ids); bindings.append(devices.installed); bindings.append(devices.keys); bindings.append(devices.raises)
        bindings.append(shortcuts.bodies); bindings.append(shortcuts.walls); bindings.append(shortcuts.counters)
        // $43: the donation groups' suggestion sums, last so the other parameters keep their numbers.
        bindings.append(kept.habits)
        // $44, $45: the shortcuts' latest donation keys and sums; $46…$48: the sums of shortcuts
        // whose view did not change.
        bindings.append(shortcuts.keys); bindings.append(shortcuts.sums)
        var sumsAlone = (bundles: [String](), identifiers: [String](), sums: [ByteBuffer]())
        for (shortcut, sums) in result.sumsAlone {
            sumsAlone.bundles.append(shortcut.bundleId); sumsAlone.identifiers.append(shortcut.identifier)
            sumsAlone.sums.append(Self.stored(sums))
        }
        bindings.append(sumsAlone.bundles); bindings.append(sumsAlone.identifiers); bindings.append(sumsAlone.sums)
        // $49: how many shortcuts the account's view holds after the batch (the account's row).
        bindings.append(Int64(result.shortcutCount))
        // $50: the donation groups' compacted parts (`CompactionColumns`).
        bindings.append(kept.compacted)
    }

    /// Sums as their column's bytes; empty bytes stand for none (NULL).
    private static func stored(_ sums: ShortcutHabits?) -> ByteBuffer {
        sums?.bytes.map { ByteBuffer(bytes: $0) } ?? ByteBuffer()
    }
}

/// One account's voice shortcut rows as the column arrays of `unnest`; "" and empty bytes stand
/// for NULL.
private struct VoiceShortcutColumns {
    var ids: [UUID] = [], views: [String] = [], versions: [Int64] = [], deleted: [Bool] = []
    var targetKeys: [ByteBuffer] = [], targetBundles: [String] = [], targetIdentifiers: [String] = [], targetTitles: [String] = []
    var phraseKeys: [ByteBuffer] = [], phrases: [String] = [], normalized: [String] = [], owners: [UUID] = [], available: [Bool] = []
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    mutating func append(_ change: VoiceShortcutChange, version: Int64) throws {
        let row = change.row
        ids.append(row.id)
        views.append(try row.view.map { String(decoding: try encoder.encode($0), as: UTF8.self) } ?? "")
        versions.append(version); deleted.append(row.deleted)
        targetKeys.append(row.target?.key.stored ?? ByteBuffer())
        targetBundles.append(row.target?.value.bundleId ?? ""); targetIdentifiers.append(row.target?.value.identifier ?? "")
        targetTitles.append(row.target?.value.title ?? "")
        phraseKeys.append(row.phrase?.key.stored ?? ByteBuffer()); phrases.append(row.phrase?.value ?? "")
        normalized.append(row.normalizedPhrase ?? "")
        owners.append(row.conflictsWith ?? UUID.zero); available.append(row.targetAvailable)
    }
}

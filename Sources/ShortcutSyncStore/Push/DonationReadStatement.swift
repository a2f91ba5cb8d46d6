import Foundation
import PostgresNIO
import ShortcutSyncDomain

/// The read of a push of donations alone (the common push), on the live tables: what
/// `FoldReadStatement` reads for such a batch, in a statement that holds only the parts it needs
/// (the account's row, the donated shortcuts' groups, their deletion marks and forgets, the voice
/// shortcuts bound to them, and the head with the device's last seq) and the same row shape.
///
/// Every part a statement holds costs PostgreSQL its tables and indexes opened and locked and its
/// plan's nodes set up at every run, whether it finds rows or not: for the same rows this one took
/// a median 85 % of the whole read's execution time in ten alternating runs (66–119 %,
/// docs/benchmarks.md). `DonationReadTests` holds the two to the same rows.
struct DonationReadStatement: PostgresPreparedStatement {
    static let name = "FoldRead.donations"
    /// The whole read's parts that such a batch needs, with its parameters (`$1`…`$14`, those it
    /// does not read among them): the groups of the shortcuts of `$2`, `$3` alone, and the voice
    /// shortcuts bound to them found directly.
    static let sql = FoldSQL.statement(
        [("wanted_groups", "SELECT k.b, k.i FROM unnest($2::text[], $3::text[]) AS k(b, i)")],
        then: [FoldSQL.accountPart, FoldSQL.groupsPart, FoldSQL.marksPart, boundVoicesPart, FoldSQL.headPart].joined(separator: "\nUNION ALL\n"))

    /// The voice shortcuts bound to the donated shortcuts (part 3): a donation may make them available.
    static let boundVoicesPart = """
        SELECT 3, v.target_bundle_id, v.target_identifier, v.target_title, v.phrase, v.normalized_phrase, v.target_key, v.phrase_key,
               NULL, NULL, NULL, v.voice_shortcut_id, v.conflicts_with, v.deleted, v.target_available, NULL, NULL, NULL, NULL
        FROM wanted_groups w
        CROSS JOIN LATERAL (SELECT v.* FROM projection_voice_shortcuts v
                            WHERE v.account_id = $1 AND v.target_bundle_id = w.b AND v.target_identifier = w.i OFFSET 0) v
        """

    /// The whole read's parameters, declared: this statement does not read `$4`…`$6` and `$10`…`$13`.
    static let bindingDataTypes: [PostgresDataType] = [.uuid, .textArray, .textArray, .textArray, .textArray, .textArray,
                                                       .textArray, .textArray, .textArray, .uuidArray, .textArray, .textArray,
                                                       .uuidArray, .uuid]

    var account: UUID
    var needs: FoldNeeds
    /// The device whose last seq the head row carries (0 without one).
    var device: UUID?

    /// Whether this statement reads everything `needs` asks for: a batch of donations alone
    /// needs their shortcuts' groups, marks and forgets (read from the whole read's parameters,
    /// whatever they hold), and the voice shortcuts bound to them; nothing by app, group, voice
    /// shortcut, phrase or device.
    static func covers(_ needs: FoldNeeds) -> Bool {
        !needs.everyGroup && needs.shortcutsInGroups.isEmpty && needs.bundles.isEmpty && needs.voiceShortcuts.isEmpty
            && needs.phrases.isEmpty && needs.devices.isEmpty
    }

    /// The whole read's bindings, for the same needs (its arrays not read here are empty).
    func makeBindings() throws -> PostgresBindings {
        try FoldReadStatement<LiveProjectionTables>(account: account, needs: needs, device: device).makeBindings()
    }

    func decodeRow(_ row: PostgresRow) throws -> FoldReadRow {
        try FoldReadRow(row)
    }
}

import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

extension ProjectionRowStore {
    /// Writes the results of accounts folded from nothing into tables that hold none of their
    /// rows (a rebuild's account-by-account pass), in bulk: `COPY` for every table, the
    /// projected shortcuts through a staging table joined with the log for their latest
    /// donation's attributes. One transaction on `connection`.
    public func copy(_ results: [UUID: AccountBatchResult], on connection: PostgresConnection) async throws {
        guard !results.isEmpty else { return }
        let p = tables.prefix
        var accounts = CopyText(), groups = CopyText(), marks = CopyText(), voices = CopyText()
        var devices = CopyText(), shortcuts = CopyText()
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for (account, result) in results {
            // Once an account, not once a row.
            let accountText = account.uuidString
            accounts.row([.text(accountText), .int(result.version), .int(result.maxHLC.wallMillis), .int(Int64(result.maxHLC.counter)),
                          result.learning?.bytes.map { .bytes($0) } ?? .null, .bool(result.learning?.forgetsShortcuts ?? false),
                          .int(Int64(result.shortcutCount))])
            for case let (id, row?) in result.groups {
                groups.row([.text(accountText), .text(id.shortcut.bundleId), .text(id.shortcut.identifier), .text(id.group),
                            .int(Int64(row.count)), .bytes(row.latest.sortableBytes), .int(row.latestVersion),
                            row.coveredBelow.map { .bytes($0.sortableBytes) } ?? .null,
                            row.habits.bytes.map { .bytes($0) } ?? .null,
                            CompactionColumns.stored(compactedOf: row).map { .bytes(Array($0.readableBytesView)) } ?? .null])
            }
            for (scope, key) in result.marks {
                let columns = StoredScopes.columns(of: scope)
                marks.row([.text(accountText), .text(scope.bundleId), .text(columns.scope), .text(columns.value), .bytes(key.sortableBytes)])
            }
            for (shortcut, key) in result.forgottenShortcuts {
                marks.row([.text(accountText), .text(shortcut.bundleId), .text(StoredScopes.forget), .text(shortcut.identifier),
                           .bytes(key.sortableBytes)])
            }
            for change in result.voiceShortcuts {
                let row = change.row
                let view: CopyText.Value = try row.view.map { .text(String(decoding: try encoder.encode($0), as: UTF8.self)) } ?? .null
                voices.row([.text(accountText), .text(row.id.uuidString), view, .int(change.viewChanged ? result.version : 0),
                            .bool(row.deleted), row.target.map { .bytes($0.key.sortableBytes) } ?? .null,
                            row.target.map { .text($0.value.bundleId) } ?? .null, row.target.map { .text($0.value.identifier) } ?? .null,
                            row.target.map { .text($0.value.title) } ?? .null, row.phrase.map { .bytes($0.key.sortableBytes) } ?? .null,
                            row.phrase.map { .text($0.value) } ?? .null, row.phrase == nil ? .null : row.normalizedPhrase.map { .text($0) } ?? .null,
                            row.conflictsWith.map { .text($0.uuidString) } ?? .null, .bool(row.targetAvailable)])
            }
            for (device, change) in result.devices {
                devices.row([.text(accountText), .text(device.uuidString), .text(Self.arrayLiteral(change.reported.value.sorted())),
                             .int(1), .bytes(change.reported.key.sortableBytes)])
            }
            for case let (shortcut, projection?) in result.shortcuts {
                shortcuts.row([.text(accountText), .text(shortcut.bundleId), .text(shortcut.identifier),
                               .int(projection.latestVersion), .int(Int64(projection.donationCount)), .int(result.version),
                               .bytes(projection.latest.sortableBytes), result.shortcutSums[shortcut]?.bytes.map { .bytes($0) } ?? .null])
            }
        }
        try await connection.inTransaction(logger: logger) { connection in
            // COPY quotes the table's name whole, so a schema is chosen by the search path instead.
            if tables == .rebuild {
                try await connection.guardedQuery("SET LOCAL search_path TO rebuild, public", logger: logger)
            }
            try await copy(accounts, into: "projection_accounts", ["account_id", "version", "max_hlc_wall", "max_hlc_counter", "learning", "forgets_shortcuts",
                                                                 "shortcut_count"], on: connection)
            try await copy(groups, into: "projection_donation_groups",
                           ["account_id", "bundle_id", "identifier", "group_id", "donations", "latest_key", "latest_version", "covered_below", "habits",
                            "compacted"],
                           on: connection)
            try await copy(marks, into: "projection_deletion_marks", ["account_id", "bundle_id", "scope", "value", "key"], on: connection)
            try await copy(voices, into: "projection_voice_shortcuts",
                           ["account_id", "voice_shortcut_id", "view", "version", "deleted", "target_key", "target_bundle_id", "target_identifier",
                            "target_title", "phrase_key", "phrase", "normalized_phrase", "conflicts_with", "target_available"], on: connection)
            try await copy(devices, into: "projection_devices", ["account_id", "device_id", "installed", "apps_version", "reported_key"], on: connection)
            try await connection.guardedQuery("""
                CREATE TEMP TABLE IF NOT EXISTS copied_shortcuts (
                    account_id uuid, bundle_id text, identifier text, latest_version bigint, donations bigint, version bigint,
                    latest_key bytea, habits bytea
                ) ON COMMIT DELETE ROWS
                """, logger: logger)
            try await copy(shortcuts, into: "copied_shortcuts",
                           ["account_id", "bundle_id", "identifier", "latest_version", "donations", "version", "latest_key", "habits"], on: connection)
            try await connection.guardedQuery("""
                INSERT INTO \(unescaped: p)projection_shortcuts (account_id, bundle_id, identifier, view, version, donations, latest_key, habits)
                SELECT k.account_id, k.bundle_id, k.identifier,
                       e.body || jsonb_build_object('donationCount', k.donations,
                                                    'lastDonatedAt', jsonb_build_object('wallMillis', e.hlc_wall, 'counter', e.hlc_counter)),
                       k.version, k.donations, k.latest_key, k.habits
                FROM copied_shortcuts k JOIN events e ON e.account_id = k.account_id AND e.version = k.latest_version
                """, logger: logger)
        }
    }

    private func copy(_ text: CopyText, into table: String, _ columns: [String], on connection: PostgresConnection) async throws {
        guard !text.isEmpty else { return }
        try await connection.untilClosed { connection in
            try await connection.copyFrom(table: table, columns: columns, logger: logger) { writer in
                try await writer.write(text.buffer)
            }
        }
    }
}

/// Rows in `COPY … FROM STDIN` text format: tab between columns, `\N` for NULL, backslash
/// escapes for backslash, tab, newline and carriage return; bytea as `\x` and hex.
struct CopyText {
    enum Value {
        case text(String), int(Int64), bool(Bool), bytes([UInt8]), null
    }

    private(set) var buffer = ByteBuffer()
    var isEmpty: Bool { buffer.readableBytes == 0 }

    mutating func row(_ values: [Value]) {
        for (index, value) in values.enumerated() {
            if index > 0 { buffer.writeInteger(UInt8(ascii: "\t")) }
            switch value {
            case .text(let text): writeEscaped(text)
            case .int(let number): buffer.writeString(String(number))
            case .bool(let flag): buffer.writeString(flag ? "t" : "f")
            case .null: buffer.writeString("\\N")
            case .bytes(let bytes):
                buffer.writeString("\\\\x")
                writeHex(bytes)
            }
        }
        buffer.writeInteger(UInt8(ascii: "\n"))
    }

    /// `bytes` as hex digits, written in one step: a rebuild writes a few keys and sums a row,
    /// and one write a digit (each checking the buffer's capacity and its storage's exclusive
    /// access) was some 6 % of the rebuild process's samples (perf, 400 × 1,000 interleaved).
    private mutating func writeHex(_ bytes: [UInt8]) {
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: bytes.count * 2) { out in
            for (index, byte) in bytes.enumerated() {
                out[2 * index] = Self.hexDigit(byte >> 4)
                out[2 * index + 1] = Self.hexDigit(byte & 0x0F)
            }
            return bytes.count * 2
        }
    }

    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    private mutating func writeEscaped(_ text: String) {
        // Nearly every text has nothing to escape: written whole.
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") })
        else {
            buffer.writeString(text)
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): buffer.writeString("\\\\")
            case UInt8(ascii: "\t"): buffer.writeString("\\t")
            case UInt8(ascii: "\n"): buffer.writeString("\\n")
            case UInt8(ascii: "\r"): buffer.writeString("\\r")
            default: buffer.writeInteger(byte)
            }
        }
    }
}

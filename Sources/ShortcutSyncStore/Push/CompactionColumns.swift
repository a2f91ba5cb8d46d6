import Foundation
import NIOCore
import ShortcutSyncDomain

/// How a compaction's state is stored (migration 0025): the account's horizon and a donation
/// group's compacted part, each one `bytea` column, NULL when there is none.
enum CompactionColumns {
    /// `projection_accounts.horizon`: the version (8 bytes, big-endian), then the key's 40 bytes.
    static func stored(_ horizon: AccountHorizon) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(horizon.version)
        buffer.writeBytes(horizon.key.sortableBytes)
        return buffer
    }

    static func horizon(stored buffer: ByteBuffer) throws -> AccountHorizon {
        var buffer = buffer
        guard buffer.readableBytes == 8 + EventKey.sortableByteCount, let version = buffer.readInteger(as: Int64.self),
              let key = EventKey(sortableBytes: buffer.readableBytesView) else {
            throw StoreError.corruptRow("a stored horizon has \(buffer.readableBytes) bytes")
        }
        let horizon = AccountHorizon(version: version, key: key)
        guard horizon.isWithinLimits else {
            throw StoreError.corruptRow("a stored horizon holds a version or key no compaction makes (version \(version))")
        }
        return horizon
    }

    /// `projection_donation_groups.compacted`: nil when the group counts no compacted donation;
    /// else the count (8 bytes, big-endian), then the sums' bytes (none when they are empty).
    static func stored(compactedOf row: DonationGroupRow) -> ByteBuffer? {
        guard row.compactedCount > 0 else { return nil }
        var buffer = ByteBuffer()
        buffer.writeInteger(Int64(row.compactedCount))
        if let bytes = row.compactedHabits.bytes { buffer.writeBytes(bytes) }
        return buffer
    }

    /// Sets `row`'s compacted part from its stored column.
    static func read(compacted buffer: ByteBuffer, into row: inout DonationGroupRow) throws {
        var buffer = buffer
        guard let count = buffer.readInteger(as: Int64.self), count > 0, count <= Int64(row.count) else {
            throw StoreError.corruptRow("a stored compacted part of \(buffer.readableBytes) bytes cannot be read")
        }
        row.compactedCount = Int(count)
        row.compactedHabits = buffer.readableBytes == 0 ? ShortcutHabits() : try ShortcutHabits(stored: buffer)
    }
}

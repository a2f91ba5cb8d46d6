import Crypto
import Foundation
import ShortcutSyncDomain

/// What recognises a retry of a device's events after a compaction removed them (migration 0029,
/// DESIGN §4 "A retry stays a retry for ever"): a fingerprint of each one's id, by seq, two bytes
/// a seq from `firstSeq` on. One row of `retry_fingerprints`, and one `retry` line of an export.
public struct RetryFingerprints: Sendable, Hashable {
    public var deviceId: UUID
    public var firstSeq: Int64
    /// Two bytes a seq: `firstSeq`'s, then the next seq's, and so on.
    public var fingerprints: [UInt8]

    public init(deviceId: UUID, firstSeq: Int64, fingerprints: [UInt8]) {
        self.deviceId = deviceId
        self.firstSeq = firstSeq
        self.fingerprints = fingerprints
    }

    /// The most seqs one row holds (16 KiB of fingerprints), so that a compaction that adds to a
    /// device's row rewrites little.
    public static let maximumSeqs = 8_192

    /// The seqs this row covers; nil when its fingerprints are not whole (an odd count, none, or
    /// more than `maximumSeqs`) or they would pass the greatest seq an event can have.
    public var seqs: ClosedRange<Int64>? {
        let count = fingerprints.count / 2
        guard fingerprints.count % 2 == 0, (1...Self.maximumSeqs).contains(count), firstSeq >= 1,
              firstSeq <= Limits.seqRange.upperBound - Int64(count) else { return nil }
        return firstSeq...(firstSeq + Int64(count) - 1)
    }

    /// The fingerprint this row keeps for `seq`; nil when it does not cover it.
    public func fingerprint(at seq: Int64) -> [UInt8]? {
        guard let seqs, seqs.contains(seq) else { return nil }
        let offset = Int(seq - firstSeq) * 2
        return Array(fingerprints[offset..<(offset + 2)])
    }

    /// The first two bytes of SHA-256 of the id's 16 bytes, as the compaction's SQL computes it
    /// (`substring(sha256(uuid_send(event_id)) FROM 1 FOR 2)`).
    public static func fingerprint(of id: UUID) -> [UInt8] {
        Array(SHA256.hash(data: withUnsafeBytes(of: id.uuid) { Data($0) }).prefix(2))
    }
}

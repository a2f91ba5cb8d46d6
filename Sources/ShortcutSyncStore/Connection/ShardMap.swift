import Foundation

/// Where a Citus cluster places each account (issue 66, item 4): the hash ranges of
/// `account_heads`' shards, each with the node that holds it. Every account table is colocated
/// with `account_heads`, so an account's rows are all on the node whose range holds the hash of
/// its id. The route is computed here, in the process, as Citus computes it: the distribution
/// column's hash (for a `uuid`, PostgreSQL's `uuid_hash`), then the shard whose
/// `[shardminvalue, shardmaxvalue]` holds it (`pg_dist_shard`), then its placement's node.
public struct ShardMap: Sendable, Hashable {
    /// A shard's range of hashes (both ends included) and the node (`host:port`) that holds it.
    public struct Shard: Sendable, Hashable {
        public var lowest: Int32
        public var highest: Int32
        public var node: String

        public init(lowest: Int32, highest: Int32, node: String) {
            self.lowest = lowest
            self.highest = highest
            self.node = node
        }
    }

    /// Ascending by `lowest`.
    public let shards: [Shard]

    public init(shards: [Shard]) {
        self.shards = shards.sorted { $0.lowest < $1.lowest }
    }

    /// The node that holds `account`'s shards, or nil when no shard's range holds its hash (a
    /// map read in the middle of a change).
    public func node(for account: UUID) -> String? {
        let hash = Self.hash(account)
        // The last shard whose lowest hash is at most this one.
        var low = 0, high = shards.count
        while low < high {
            let middle = (low + high) / 2
            if shards[middle].lowest <= hash { low = middle + 1 } else { high = middle }
        }
        guard low > 0, hash <= shards[low - 1].highest else { return nil }
        return shards[low - 1].node
    }

    /// PostgreSQL's hash of a `uuid` (`uuid_hash`: its 16 bytes through `hash_bytes`, Bob
    /// Jenkins's lookup3 as PostgreSQL adapted it), as the signed 32 bits Citus compares with
    /// the shards' ranges. Written from the algorithm's description; `ShardMapTests` holds it to
    /// the database's own `uuid_hash` for many ids.
    public static func hash(_ id: UUID) -> Int32 {
        let bytes = withUnsafeBytes(of: id.uuid) { Array($0) }
        func word(_ index: Int) -> UInt32 {
            // Little-endian, as PostgreSQL reads the words on the machines it runs on here.
            UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16 | UInt32(bytes[index + 3]) << 24
        }
        func rotated(_ value: UInt32, _ by: UInt32) -> UInt32 { value << by | value >> (32 - by) }
        let start: UInt32 = 0x9E37_79B9 &+ 16 &+ 3_923_095
        var a = start, b = start, c = start
        // The first twelve bytes, then the mixing of lookup3.
        a &+= word(0); b &+= word(4); c &+= word(8)
        a &-= c; a ^= rotated(c, 4); c &+= b
        b &-= a; b ^= rotated(a, 6); a &+= c
        c &-= b; c ^= rotated(b, 8); b &+= a
        a &-= c; a ^= rotated(c, 16); c &+= b
        b &-= a; b ^= rotated(a, 19); a &+= c
        c &-= b; c ^= rotated(b, 4); b &+= a
        // The last four bytes, then its final mixing.
        a &+= word(12)
        c ^= b; c &-= rotated(b, 14)
        a ^= c; a &-= rotated(c, 11)
        b ^= a; b &-= rotated(a, 25)
        c ^= b; c &-= rotated(b, 16)
        a ^= c; a &-= rotated(c, 4)
        b ^= a; b &-= rotated(a, 14)
        c ^= b; c &-= rotated(b, 24)
        return Int32(bitPattern: c)
    }
}

import Foundation
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

/// The shard map's own rules (issue 66, item 4), on one PostgreSQL: the hash of an account's id
/// is PostgreSQL's `uuid_hash` for every id tried, and a hash falls in the shard whose range
/// holds it, both ends included. (That the map's nodes are Citus's is
/// `CitusAttachedServersTests.theShardMapPlacesEveryAccountAsCitusDoes`.)
@Suite struct ShardMapTests {
    @Test func theHashOfAnIdIsPostgreSQLsUUIDHash() async throws {
        try await TestDatabase.withClient(maximumConnections: 2) { client, _ in
            var ids = (0..<10_000).map { _ in UUID() }
            ids += [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                    UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255))]
            let hashed = try await client.query("SELECT a.id, uuid_hash(a.id) FROM unnest(\(ids)::uuid[]) AS a(id)")
                .decode((UUID, Int32).self).collectAll()
            #expect(hashed.count == ids.count)
            let wrong = hashed.filter { ShardMap.hash($0.0) != $0.1 }
            #expect(wrong.isEmpty, "\(wrong.count) of \(hashed.count) hashed otherwise, the first \(wrong.prefix(3))")
        }
    }

    @Test func aHashFallsInTheShardWhoseRangeHoldsIt() throws {
        let map = ShardMap(shards: [
            .init(lowest: 0, highest: .max, node: "b:5432"),
            .init(lowest: .min, highest: -1, node: "a:5432"),
        ])
        for _ in 0..<1_000 {
            let id = UUID()
            #expect(map.node(for: id) == (ShardMap.hash(id) < 0 ? "a:5432" : "b:5432"))
        }
        // A map with a gap (read in the middle of a change) places no id in it.
        let gapped = ShardMap(shards: [.init(lowest: .min, highest: -1, node: "a:5432")])
        let id = try #require((0..<1_000).lazy.map { _ in UUID() }.first { ShardMap.hash($0) >= 0 })
        #expect(gapped.node(for: id) == nil)
        #expect(ShardMap(shards: []).node(for: id) == nil)
    }
}

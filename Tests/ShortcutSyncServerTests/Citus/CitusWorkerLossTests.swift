import EmbeddedPostgres
import Foundation
import NIOHTTP1
import PostgresNIO
import ShortcutSyncApp
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

/// A worker of the Citus cluster lost while the service serves (issue 57, item 4): the accounts
/// whose shards it holds are answered 503 with Retry-After at once, the others keep pushing and
/// pulling, `/readyz` names the node, and when it is back everything acknowledged is there, once.
/// A cluster of its own (the worker is stopped), skipped where Citus is not installed.
@Suite(.serialized, .enabled(if: CitusCluster.suitesRun, CitusCluster.notInstalled), .citusCluster)
struct CitusWorkerLossTests {
    /// The port of the worker that holds `account`'s shard of `events` (all of its tables are in one colocation group).
    static func workerPort(of account: UUID, _ sql: PostgresClient) async throws -> Int {
        let ports = try await sql.query("""
            SELECT s.nodeport FROM citus_shards s
            WHERE s.table_name = 'events'::regclass AND s.shardid = get_shard_id_for_distribution_column('events', \(account))
            """).decode(Int32.self).collectAll()
        return Int(try #require(ports.first))
    }

    static func push(_ server: TestServer, _ token: String, seq: Int, identifier: String) async throws -> (status: Int, headers: HTTPHeaders) {
        let answer = try await server.request(.POST, "/v1/sync/push", token: token,
                                              body: InputLimitTests.push([HostileClientTests.donation(seq: seq, identifier: identifier)]))
        return (answer.status, answer.headers)
    }

    /// Both ways a server reaches the workers: through the coordinator, and routing each account
    /// to the worker of its shards (`--route-by-account`), whose pool on the lost worker fails.
    @Test(arguments: [false, true])
    func aLostWorkersAccountsAre503TheOthersAreServedAndNothingAcknowledgedIsLost(routesByAccount: Bool) async throws {
        let cluster = try CitusCluster.required()
        try await TestServer.with(configure: { $0.routesByAccount = routesByAccount }) { server in
            // An account whose shard is on each worker, each with a device that pushed once.
            var byPort: [Int: (device: SimulatedDevice, seq: Int)] = [:]
            for _ in 0..<40 where byPort.count < 2 {
                let account = try await server.createAccount()
                let port = try await Self.workerPort(of: account.id, server.sql)
                guard byPort[port] == nil else { continue }
                let device = try await server.createDevice(accountToken: account.token)
                #expect(try await Self.push(server, device.token, seq: 1, identifier: "first").status == 200)
                byPort[port] = (device, 1)
            }
            try #require(byPort.count == 2, "accounts on both workers")
            let lostIndex = try #require(cluster.workers.firstIndex { $0.port == byPort.keys.sorted()[0] })
            let lostPort = cluster.workers[lostIndex].port
            var lost = byPort[lostPort]!, kept = byPort.first { $0.key != lostPort }!.value

            try await cluster.stopWorkerImmediately(lostIndex)
            do {
                // The lost worker's account: 503 with Retry-After, within 2 s, nothing stored.
                let started = ContinuousClock.now
                let refused = try await Self.push(server, lost.device.token, seq: lost.seq + 1, identifier: "while-away")
                #expect(refused.status == 503, "a push to the lost worker's account")
                #expect(refused.headers.first(name: "Retry-After") != nil)
                #expect(ContinuousClock.now - started < .seconds(2))
                #expect(try await server.raw(.GET, "/v1/sync/pull", token: lost.device.token).status == 503)

                // The other worker's account goes on pushing and pulling.
                for _ in 0..<5 {
                    kept.seq += 1
                    let pushed = try await server.raw(.POST, "/v1/sync/push", token: kept.device.token,
                                                      body: InputLimitTests.push([HostileClientTests.donation(seq: kept.seq, identifier: "kept-\(kept.seq)")]))
                    #expect(pushed.status == 200, "\(pushed.json)")
                }

                let pulled = try await server.raw(.GET, "/v1/sync/pull", token: kept.device.token)
                #expect(pulled.status == 200, "a pull of the other worker's account: \(pulled.json)")

                // /readyz names the node that is away, and still says ready: the others are served.
                let ready = try await server.operators("/readyz")
                #expect(ready.json["nodesAway"] as? [String] == ["127.0.0.1:\(lostPort)"], "\(ready.json)")
                #expect(ready.json["degraded"] as? Bool == true, "\(ready.json)")
            } catch {
                try await cluster.startWorker(lostIndex)
                throw error
            }
            try await cluster.startWorker(lostIndex)

            // Back: the lost account's push goes through (its refused one was never stored), and
            // everything acknowledged is there once.
            try await eventually("the lost worker's account pushes again", timeout: .seconds(20)) {
                try await Self.push(server, lost.device.token, seq: lost.seq + 1, identifier: "after").status == 200
            }
            lost.seq += 1
            // Its reading is kept a second: soon after, /readyz names no node.
            try await eventually("/readyz names no node once the worker is back", timeout: .seconds(10)) {
                try await server.operators("/readyz").json["nodesAway"] == nil
            }
            for (device, seq) in [lost, kept] {
                let seqs = try await server.sql.query("SELECT seq FROM events WHERE device_id = \(device.id) ORDER BY seq").decode(Int64.self).collectAll()
                #expect(seqs == (1...Int64(seq)).map { $0 }, "every acknowledged event of \(device.id), once")
            }
        }
    }
}

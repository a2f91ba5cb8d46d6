import AsyncHTTPClient
import EmbeddedPostgres
import Foundation
import NIOCore
import NIOHTTP1
import PostgresNIO
import ShortcutSyncBench
import ShortcutSyncDatabaseTestSupport
import ServiceLifecycle
import ShortcutSyncStore
import Testing

/// `bench push`'s stack floor (`StackFloor`) does what it is measured for: each push's two
/// statements, a version a token, the body stored as it came; and it stops when asked.
@Suite struct StackFloorTests {
    static func push(_ port: Int, token: String?, body: String) async throws -> (UInt, String) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/sync/push")
        request.method = .POST
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        return (response.status.code, String(buffer: try await response.body.collect(upTo: 1 << 16)))
    }

    @Test func eachPushMovesItsTokensVersionAndStoresItsBody() async throws {
        try await TestDatabase.withClient { client, url in
            let logger = TestDatabase.shared.logger
            try await StackFloor.prepare(url, logger: logger)
            let port = try EmbeddedPostgres.freeLoopbackPort()
            let floor = try StackFloor.services(url, port: port, logger: logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await floor.run() }
                // Until it listens.
                let deadline = ContinuousClock.now + .seconds(30)
                while (try? await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/healthz"), timeout: .seconds(2)))?.status.code != 200 {
                    try #require(ContinuousClock.now < deadline, "the floor did not answer within 30 s")
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(try await Self.push(port, token: "phone", body: #"{"events":[{"seq":1}]}"#) == (200, #"{"version":1}"#))
                #expect(try await Self.push(port, token: "phone", body: #"{"events":[{"seq":2}]}"#) == (200, #"{"version":2}"#))
                #expect(try await Self.push(port, token: "mac", body: #"{"events":[{"seq":1}]}"#) == (200, #"{"version":1}"#))
                #expect(try await Self.push(port, token: nil, body: #"{"events":[]}"#).0 == 401)
                // Stopped as `bench push` stops it (SIGTERM): it ends, and its port is free again.
                await floor.triggerGracefulShutdown()
                try await group.waitForAll()
            }
            let afterStop = try? await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/healthz"), timeout: .seconds(2))
            #expect(afterStop == nil, "nothing listens once the floor has stopped")
            let rows = try await client.query("SELECT token, version, body::text FROM bench_floor_events ORDER BY token, version", logger: logger)
            var stored: [String] = []
            for try await (token, version, body) in rows.decode((String, Int64, String).self) { stored.append("\(token) \(version) \(body)") }
            #expect(stored == [#"mac 1 {"events": [{"seq": 1}]}"#, #"phone 1 {"events": [{"seq": 1}]}"#, #"phone 2 {"events": [{"seq": 2}]}"#])
            try await StackFloor.drop(url, logger: logger)
            let left = try await client.query("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'bench_floor%'", logger: logger)
            #expect(try await left.decode(Int64.self).collectAll() == [0])
        }
    }
}

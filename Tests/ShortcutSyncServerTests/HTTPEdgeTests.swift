import AsyncHTTPClient
import EmbeddedPostgres
import Foundation
import Logging
import NIOHTTP1
import PostgresNIO
import ShortcutSyncAPI
import ShortcutSyncDomain
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

/// The edges every client meets sooner or later (DESIGN §5): honest status codes, all as problem+json.
@Suite struct HTTPEdgeTests {
    /// Issue 59: the generated server's `push` is a stub that answers 500, which the protocol
    /// requires and no route reaches (`PushRoute` answers the path; `GeneratedRoutes` leaves the
    /// generated one out). Were it installed, every push would be that 500, whatever its body.
    @Test func theGeneratedPushStubIsNeverInstalled() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            let malformed = try await server.raw(.POST, "/v1/sync/push", token: device.token, body: Array("{".utf8))
            #expect(malformed.status == 400, "\(malformed.json)")
            let pushed = try await server.raw(.POST, "/v1/sync/push", token: device.token,
                                              body: InputLimitTests.push([HostileClientTests.donation(seq: 1, identifier: "tomato")]))
            #expect(pushed.status == 200, "\(pushed.json)")
        }
    }

    @Test func aBodyThatIsNotJSONIs415AndStoresNothing() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            let push = InputLimitTests.push([InputLimitTests.event(seq: 1)])
            for contentType in ["text/plain", "application/x-www-form-urlencoded", "application/xml"] {
                let answer = try await server.request(.POST, "/v1/sync/push", token: device.token, body: push, contentType: contentType)
                #expect(answer.status == 415, "\(contentType)")
                #expect(answer.headers.first(name: "Content-Type") == "application/problem+json", "\(contentType)")
                #expect(answer.json["status"] as? Int == 415, "\(contentType)")
            }
            #expect(try await eventCount(server.sql) == 0)
            // The same events as JSON are fine.
            #expect(try await server.request(.POST, "/v1/sync/push", token: device.token, body: push).status == 200)
        }
    }

    @Test func anUnknownPathIs404AndAWrongMethodIs405WithAllow() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            let unknown = try await server.request(.GET, "/v1/nothing/here", token: device.token)
            #expect(unknown.status == 404)
            #expect(unknown.headers.first(name: "Content-Type") == "application/problem+json")
            #expect(unknown.json["status"] as? Int == 404)

            let wrong: [(HTTPMethod, String, String)] = [
                (.GET, "/v1/sync/push", "POST"),
                (.RAW(value: "TRACE"), "/v1/sync/pull", "GET"),
                (.DELETE, "/v1/accounts", "POST"),
                (.PUT, "/v1/devices/\(UUID())", "DELETE"),
                (.POST, "/healthz", "GET"),
            ]
            // With or without a token: a method the path does not answer needs none to be told so.
            for token in [device.token, nil] as [String?] {
                for (method, path, allowed) in wrong {
                    let answer = try await server.request(method, path, token: token)
                    #expect(answer.status == 405, "\(method) \(path)")
                    #expect(answer.headers.first(name: "Allow") == allowed, "\(method) \(path)")
                    #expect(answer.headers.first(name: "Content-Type") == "application/problem+json", "\(method) \(path)")
                    #expect(answer.json["status"] as? Int == 405, "\(method) \(path)")
                }
            }
        }
    }

    /// An event id with a sign in its first group, which Foundation reads on Linux as another id
    /// (FA21E1F8-…): the push is 422, pointing at it, and nothing is stored.
    @Test func anIdNotInItsCanonicalFormIsRefused() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            let event = InputLimitTests.event(seq: 1).replacing(/"id":"[^"]+"/, with: #""id":"-621E1F8-C36C-495A-93FC-0C247A3E6E5F""#)
            let answer = try await server.raw(.POST, "/v1/sync/push", token: device.token, body: InputLimitTests.push([event]))
            #expect(answer.status == 422)
            #expect(answer.json.pointers == ["/events/0/id"])
            #expect(try await eventCount(server.sql) == 0)
        }
    }

    /// An id reused after an exact retry in the same batch: the 409 points at the reuse, not the retry.
    @Test func aReusedIdIsPointedAtTheEventThatReusesIt() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            let first = InputLimitTests.event(seq: 1), second = InputLimitTests.event(seq: 2)
            #expect(try await server.raw(.POST, "/v1/sync/push", token: device.token, body: InputLimitTests.push([first, second])).status == 200)
            let firstId = try #require(first.firstMatch(of: /"id":"([^"]+)"/)?.output.1)
            let reuse = InputLimitTests.event(seq: 3).replacing(/"id":"[^"]+"/, with: #""id":"\#(firstId)""#)
            let answer = try await server.raw(.POST, "/v1/sync/push", token: device.token, body: InputLimitTests.push([second, reuse]))
            #expect(answer.status == 409)
            #expect(answer.json.pointers == ["/events/1/id"])
            #expect(try await eventCount(server.sql) == 2)
        }
    }

    /// With the database stopped, requests that need it are refused at once with 503 and
    /// `Retry-After`; the ones that do not still answer; when it is back, everything works again.
    @Test func whileTheDatabaseIsDownRequestsAre503AndTheServiceRecovers() async throws {
        try await Self.withClusterOfItsOwn(Self.outage)
    }

    /// Runs `body` with a cluster of the test's own (which it may stop and start), stopped and
    /// removed afterwards, also when `body` fails.
    private static func withClusterOfItsOwn(
        _ body: (EmbeddedPostgres, EmbeddedPostgres.Connection) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shortcut-sync-outage-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cluster = EmbeddedPostgres(dataDirectory: directory, logger: TestDatabase.shared.logger)
        let connection = try await cluster.start()
        do {
            try await body(cluster, connection)
        } catch {
            await cluster.stop()
            throw error
        }
        await cluster.stop()
    }

    /// DESIGN §8: any request while PostgreSQL is unreachable, however long, gets `503` with
    /// `Retry-After` within 2 s, also one already waiting when the database goes; a device that
    /// pushes through the outage with the client's retry rules (the same batch again after a 503)
    /// has every acknowledged event in its view exactly once when the database is back.
    @Test
    func everyRequestIsAnsweredWithinTwoSecondsThroughAnOutage() async throws {
        try await Self.withClusterOfItsOwn(Self.pushesThroughAnOutage)
    }

    private static func pushesThroughAnOutage(of cluster: EmbeddedPostgres, at connection: EmbeddedPostgres.Connection) async throws {
        let url = try DatabaseURL(connection.url(database: "outage"))
        try await url.createDatabaseIfMissing(logger: TestDatabase.shared.logger)
        let sql = PostgresClient(configuration: try url.clientConfiguration(maximumConnections: 2), backgroundLogger: TestDatabase.shared.logger)
        try await sql.withRunning {
            try await TestServer.with(database: url, sql: sql) { server in
                // Several devices pushing at once, so that pushes are in flight when the database goes.
                var devices: [SimulatedDevice] = []
                for _ in 0..<8 {
                    let account = try await server.createAccount()
                    devices.append(try await server.createDevice(accountToken: account.token))
                }
                let stopAt = ContinuousClock.now + .milliseconds(1500), restartAt = stopAt + .seconds(5)
                let stopping = Task {
                    try await Task.sleep(until: stopAt)
                    await cluster.stop()
                    try await Task.sleep(until: restartAt)
                    _ = try await cluster.start(preferredPort: connection.port)
                    return ContinuousClock.now
                }
                defer { stopping.cancel() }
                let outcomes = try await withThrowingTaskGroup(of: (Int, PushesThroughAnOutage).self) { group in
                    for (index, device) in devices.enumerated() {
                        group.addTask { (index, try await PushesThroughAnOutage.run(until: restartAt + .seconds(60)) { batch in
                            try await server.request(.POST, "/v1/sync/push", token: device.token, body: batch, timeout: .seconds(10))
                        }) }
                    }
                    // In the devices' order.
                    return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }.sorted { $0.key < $1.key }.map(\.value)
                }
                let restarted = try await stopping.value
                PushesThroughAnOutage.expectFailFast(outcomes, faultBegan: stopAt, faultEnded: restarted)
                #expect(outcomes.map(\.refused).reduce(0, +) > 0, "the pushes met the outage")
                for (device, outcome) in zip(devices, outcomes) {
                    #expect(outcome.acknowledgedAfterOutage, "the device's pushes were acknowledged again")
                    let acknowledged = outcome.acknowledged
                    let view = try await server.raw(.GET, "/v1/sync/pull", token: device.token)
                    #expect(view.json["lastAcceptedSeq"] as? Int == acknowledged)
                    let shortcuts = (view.json["shortcuts"] as? [String: Any])?["upserted"] as? [[String: Any]] ?? []
                    #expect(Set(shortcuts.compactMap { $0["identifier"] as? String }) == Set((0..<acknowledged).map { "item-\($0 + 1)" }))
                    #expect(shortcuts.allSatisfy { $0["donationCount"] as? Int == 1 }, "each acknowledged donation once")
                }
            }
        }
    }

    /// The service on `cluster`, which the test stops and starts again.
    private static func outage(of cluster: EmbeddedPostgres, at connection: EmbeddedPostgres.Connection) async throws {
        let url = try DatabaseURL(connection.url(database: "outage"))
        try await url.createDatabaseIfMissing(logger: TestDatabase.shared.logger)
        let sql = PostgresClient(configuration: try url.clientConfiguration(maximumConnections: 2), backgroundLogger: TestDatabase.shared.logger)
        try await sql.withRunning {
            try await TestServer.with(database: url, sql: sql) { server in
                let account = try await server.createAccount()
                let device = try await server.createDevice(accountToken: account.token)
                #expect(try await server.raw(.GET, "/v1/sync/pull", token: device.token).status == 200)

                await cluster.stop()
                var down: (status: Int, headers: HTTPHeaders, json: [String: Any]) = (0, [:], [:])
                // A request that reached the pool in the moment before the service noticed waits for
                // the pool to give up on connecting; the ones after are refused at once.
                try await eventually("requests are refused with 503", timeout: .seconds(30)) {
                    guard let answer = try? await server.request(.GET, "/v1/sync/pull", token: device.token, timeout: .seconds(2)) else {
                        return false
                    }
                    down = answer
                    return down.status == 503
                }
                #expect(down.headers.first(name: "Retry-After") == "1")
                #expect(down.headers.first(name: "Content-Type") == "application/problem+json")
                #expect(down.json["status"] as? Int == 503)
                let push = InputLimitTests.push([InputLimitTests.event(seq: 1)])
                #expect(try await server.request(.POST, "/v1/sync/push", token: device.token, body: push, timeout: .seconds(2)).status == 503)
                #expect(try await server.raw(.GET, "/healthz", token: nil).status == 200)
                #expect(try await server.operators("/readyz").status == 503)

                _ = try await cluster.start(preferredPort: connection.port)
                try await eventually("the service serves again", timeout: .seconds(90)) {
                    (try? await server.request(.GET, "/v1/sync/pull", token: device.token, timeout: .seconds(2)))?.status == 200
                }
                #expect(try await server.request(.POST, "/v1/sync/push", token: device.token, body: push).status == 200)
                #expect(try await server.operators("/readyz").status == 200)
            }
        }
    }
}

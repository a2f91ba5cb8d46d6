import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PostgresNIO
import ShortcutSyncAPI
import ShortcutSyncApp
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncServer
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

/// DESIGN §5, "Hostile or broken clients": no request may stop, exhaust or outlast the service.
/// A trap in the service would end this test process, so every test here fails loudly on one.
@Suite struct HostileClientTests {
    static var nowMillis: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    static func event(seq: String, type: String = "voiceShortcutUpdated", wall: String = "\(nowMillis)", counter: String = "0",
                      fields: String = #""voiceShortcutId":"6E9B3A52-2B7B-4E55-9C5A-4D38D7C1B0A1","phrase":"order soup""#) -> String {
        #"{"id":"\#(UUID())","seq":\#(seq),"hlc":{"wallMillis":\#(wall),"counter":\#(counter)},"type":"\#(type)",\#(fields)}"#
    }

    static func donation(seq: Int, identifier: String) -> String {
        event(seq: "\(seq)", type: "donation",
              fields: #""bundleId":"com.example.soup","identifier":"\#(identifier)","kind":"intent","intentType":"OrderSoupIntent","title":"Soup \#(identifier)""#)
    }

    /// The crash of issue 16: the contiguity check computed `first.seq + index` and trapped.
    @Test func seqsThatWouldOverflowAreRefusedAndTheServiceLivesOn() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            let overflow = try await server.raw(.POST, "/v1/sync/push", token: device.token,
                                                body: InputLimitTests.push([Self.event(seq: "9223372036854775807"), Self.event(seq: "1")]))
            #expect(overflow.status == 422)
            #expect(overflow.json.pointers == ["/events/0/seq"])

            let pastTheBound = try await server.raw(.POST, "/v1/sync/push", token: device.token,
                                                    body: InputLimitTests.push([Self.event(seq: "9007199254740992"), Self.event(seq: "9007199254740993")]))
            #expect(pastTheBound.status == 422)
            #expect(pastTheBound.json.pointers == ["/events/1/seq"])

            // The greatest seq the contract allows is taken as a number and refused only as a gap.
            let atTheBound = try await server.raw(.POST, "/v1/sync/push", token: device.token, body: InputLimitTests.push([Self.event(seq: "9007199254740992")]))
            #expect(atTheBound.status == 409)
            #expect(atTheBound.json["expectedSeq"] as? Int == 1)

            let counter = try await server.raw(.POST, "/v1/sync/push", token: device.token,
                                               body: InputLimitTests.push([Self.event(seq: "1", counter: "9223372036854775807")]))
            #expect(counter.status == 422)
            #expect(counter.json.pointers == ["/events/0/hlc/counter"])

            let fine = try await server.raw(.POST, "/v1/sync/push", token: device.token, body: InputLimitTests.push([Self.event(seq: "1", counter: "2147483647")]))
            #expect(fine.status == 200)
            #expect(try await eventCount(server.sql) == 1)
        }
    }

    /// Extreme values (0, −1, 2^31, 2^53, Int64.max and past it, fractions, huge arrays, deep
    /// nesting, long strings, wrong types) in every field of every request: each is answered
    /// with a status a client's mistake deserves, never a 5xx, and the service answers after.
    @Test func extremeValuesInEveryFieldGetAnAnswerNeverACrash() async throws {
        let hugeArray = "[" + Array(repeating: "1", count: 100_000).joined(separator: ",") + "]"
        let deepArray = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let deepObject = String(repeating: #"{"a":"#, count: 20_000) + "1" + String(repeating: "}", count: 20_000)
        let extremes = [
            "0", "-1", "2147483647", "2147483648", "4294967296", "9007199254740992", "9007199254740993",
            "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
            "1e308", "-1e308", "1.5", "-0.0", "null", "true", #""""#, #""\#(String(repeating: "x", count: 5000))""#,
            "[]", "{}", hugeArray, deepArray, deepObject, #"["com.example.soup"]"#,
        ]
        let wall = "\(Self.nowMillis)"
        // Each event type with every field it may carry, as a template of `KEY: value` pairs.
        let templates: [[(String, String)]] = [
            [("type", #""donation""#), ("bundleId", #""com.example.soup""#), ("identifier", #""tomato""#), ("kind", #""intent""#),
             ("intentType", #""OrderSoupIntent""#), ("activityType", #""com.example.order""#), ("title", #""Tomato""#), ("subtitle", #""Red""#),
             ("groupIdentifier", #""soups""#), ("suggestedInvocationPhrase", #""Soup time""#), ("keywords", #"["soup"]"#),
             ("eligibleForSearch", "true"), ("eligibleForPrediction", "true"), ("parameters", #"{"size":1}"#), ("utcOffsetMinutes", "60")],
            [("type", #""deletion""#), ("bundleId", #""com.example.soup""#), ("identifiers", #"["tomato"]"#)],
            [("type", #""deletion""#), ("bundleId", #""com.example.soup""#), ("groupIdentifier", #""soups""#)],
            [("type", #""deletion""#), ("bundleId", #""com.example.soup""#), ("all", "true")],
            [("type", #""voiceShortcutAdded""#), ("voiceShortcutId", #""6E9B3A52-2B7B-4E55-9C5A-4D38D7C1B0A1""#), ("phrase", #""Soup time""#),
             ("bundleId", #""com.example.soup""#), ("identifier", #""tomato""#), ("title", #""Tomato""#)],
            [("type", #""voiceShortcutUpdated""#), ("voiceShortcutId", #""6E9B3A52-2B7B-4E55-9C5A-4D38D7C1B0A1""#), ("phrase", #""Soup!""#)],
            [("type", #""voiceShortcutDeleted""#), ("voiceShortcutId", #""6E9B3A52-2B7B-4E55-9C5A-4D38D7C1B0A1""#)],
            [("type", #""appsReported""#), ("installed", #"["com.example.soup"]"#)],
        ]
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            var lastSeq = 0
            var answered: [Int: Int] = [:]
            var busy = 0

            // A 503 is the service saying it is busy (a push that could not start in time while the
            // whole suite loads the machine), not its answer to a value: such a request is sent
            // again after a second, up to five times, and a value the service cannot handle still
            // answers with a 5xx at the end.
            func raw(_ method: HTTPMethod, _ path: String, token: String, body: [UInt8]) async throws -> (status: Int, json: [String: Any]) {
                var answer = try await server.raw(method, path, token: token, body: body)
                for _ in 0..<5 where answer.status == 503 {
                    busy += 1
                    try await Task.sleep(for: .seconds(1))
                    answer = try await server.raw(method, path, token: token, body: body)
                }
                return answer
            }

            func expectClientError(_ status: Int, allowed: Set<Int>, _ what: @autoclosure () -> String) {
                answered[status, default: 0] += 1
                #expect(allowed.contains(status), "\(what()) was answered \(status)")
            }
            func send(_ envelope: [(String, String)], replacing field: String?, with value: String?) async throws {
                var pairs = [("id", #""\#(UUID())""#), ("seq", "\(lastSeq + 1)"), ("hlc", #"{"wallMillis":\#(wall),"counter":0}"#)] + envelope
                if let field {
                    if let index = pairs.firstIndex(where: { $0.0 == field }) { pairs[index].1 = value! }
                }
                let object = "{" + pairs.map { #""\#($0.0)":\#($0.1)"# }.joined(separator: ",") + "}"
                let answer = try await raw(.POST, "/v1/sync/push", token: device.token, body: InputLimitTests.push([object]))
                expectClientError(answer.status, allowed: [200, 400, 409, 413, 422], "a push with \(field ?? "-") = \(value?.prefix(40) ?? "-")")
                if answer.status == 200 { lastSeq = answer.json["lastAcceptedSeq"] as? Int ?? lastSeq }
            }

            for template in templates {
                for field in ["id", "seq", "hlc"] + template.map(\.0) {
                    for value in extremes { try await send(template, replacing: field, with: value) }
                }
                for value in extremes {
                    let hlc = try await raw(.POST, "/v1/sync/push", token: device.token, body: InputLimitTests.push([
                        Self.event(seq: "\(lastSeq + 1)", wall: value, counter: "0"), Self.event(seq: "\(lastSeq + 2)", wall: wall, counter: value),
                    ]))
                    expectClientError(hlc.status, allowed: [200, 400, 409, 422], "an hlc of \(value.prefix(40))")
                    if hlc.status == 200 { lastSeq = hlc.json["lastAcceptedSeq"] as? Int ?? lastSeq }
                }
            }
            for value in extremes {
                let events = try await raw(.POST, "/v1/sync/push", token: device.token, body: Array(#"{"events":\#(value)}"#.utf8))
                expectClientError(events.status, allowed: [400, 413, 422], "events = \(value.prefix(40))")
                let whole = try await raw(.POST, "/v1/sync/push", token: device.token, body: Array(value.utf8))
                expectClientError(whole.status, allowed: [400, 413, 422], "a push body of \(value.prefix(40))")
                for field in ["name", "platform"] {
                    let body = field == "name" ? #"{"name":\#(value),"platform":"iOS"}"# : #"{"name":"iPad","platform":\#(value)}"#
                    let created = try await raw(.POST, "/v1/devices", token: account.token, body: Array(body.utf8))
                    expectClientError(created.status, allowed: [201, 400, 409, 413, 422], "a device with \(field) = \(value.prefix(40))")
                }
            }
            let queryValues = ["0", "-1", "2147483648", "9007199254740993", "9223372036854775807", "9223372036854775808",
                               "-9223372036854775809", "1e308", "1.5", "abc", "", String(repeating: "9", count: 5000)]
            for value in queryValues {
                for query in ["waitFor=\(value)&timeout=0", "timeout=\(value)", "cursor=\(value)", "waitFor=\(value)&timeout=\(value)"] {
                    let pulled = try await server.request(.GET, "/v1/sync/pull?\(query)", token: device.token, timeout: .seconds(40))
                    expectClientError(pulled.status, allowed: [200, 400, 422], "a pull with \(query.prefix(60))")
                }
                let deleted = try await raw(.DELETE, "/v1/devices/\(value)", token: account.token, body: [])
                expectClientError(deleted.status, allowed: [400, 404, 405, 422], "signing out device \(value.prefix(40))")
            }
            #expect(answered.keys.allSatisfy { $0 < 500 }, "statuses: \(answered) (\(busy) busy answers asked again)")
            #expect(answered.count > 2, "the values met more than one kind of answer: \(answered)")
            let health = try await server.raw(.GET, "/healthz", token: nil)
            #expect(health.status == 200)
            let fine = try await server.raw(.POST, "/v1/sync/push", token: device.token, body: InputLimitTests.push([Self.event(seq: "\(lastSeq + 1)")]))
            #expect(fine.status == 200)
        }
    }

    /// A caller without a valid token gets its 401 while its upload is still under way: the
    /// service reads none of the body first.
    @Test func theTokenIsCheckedBeforeTheBodyIsRead() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let port = try #require(server.baseURL.port)
            // The router ignores empty segments: each spelling of a route's path is that route's.
            for (path, token) in [("/v1/sync/push", "ssd_forged"), ("/v1/sync/push", nil), ("/v1/devices", "ssa_forged"),
                                  ("/v1/devices", String(account.token.dropLast())), ("/v1/accounts", account.token),
                                  ("/v1/sync/push/", nil), ("//v1/sync/push", "ssd_forged"), ("/v1//sync//push/", nil),
                                  ("//v1/accounts/", account.token)] {
                let connection = try RawConnection(port: port)
                let authorization = token.map { "Authorization: Bearer \($0)\r\n" } ?? ""
                try connection.send("POST \(path) HTTP/1.1\r\nHost: localhost\r\n\(authorization)Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n")
                try connection.send(Array(repeating: UInt8(ascii: " "), count: 1000))
                // The rest of the megabyte never comes; the answer does.
                await connection.read(until: { $0.contains("\r\n\r\n") }, timeout: .seconds(5))
                #expect(connection.status == 401, "\(path) with \(token ?? "no token"): \(connection.text.prefix(80))")
            }
        }
    }

    /// A path that no route has is answered 404 while its upload is still under way: no byte of
    /// its body is read first, with a token or without.
    @Test func anUnknownPathIs404BeforeItsBodyIsRead() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            let port = try #require(server.baseURL.port)
            for (path, token) in [("/v1/sync/pushes", device.token), ("/nothing", nil), ("/v1/sync/push/extra", device.token)] {
                let connection = try RawConnection(port: port)
                let authorization = token.map { "Authorization: Bearer \($0)\r\n" } ?? ""
                try connection.send("POST \(path) HTTP/1.1\r\nHost: localhost\r\n\(authorization)Content-Type: application/json\r\nContent-Length: 60000\r\n\r\n")
                try connection.send(Array(repeating: UInt8(ascii: " "), count: 100))
                await connection.read(until: { $0.contains("\r\n\r\n") }, timeout: .seconds(5))
                #expect(connection.status == 404, "\(path): \(connection.text.prefix(80))")
            }
        }
    }

    /// A request refused before its body is read is answered, then its connection closed: a
    /// client that declares a huge body and trickles it cannot hold the connection.
    @Test func anEarlyRefusalClosesItsConnection() async throws {
        try await TestServer.with { server in
            let port = try #require(server.baseURL.port)
            for (path, status) in [("/v1/sync/push", 401), ("/nothing", 404), ("/v1/accounts", 401)] {
                let connection = try RawConnection(port: port)
                try connection.send("POST \(path) HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n{")
                #expect(await connection.waitUntilClosed(timeout: .seconds(5)), "\(path): the connection is closed")
                #expect(connection.status == status, "\(path): \(connection.text.prefix(80))")
            }
            // Without a body, a refusal keeps the connection for the next request.
            let kept = try RawConnection(port: port)
            try kept.send("GET /v1/sync/pull HTTP/1.1\r\nHost: localhost\r\n\r\n")
            await kept.read(until: { $0.contains("\r\n\r\n") }, timeout: .seconds(5))
            #expect(kept.status == 401)
            #expect(!(await kept.waitUntilClosed(timeout: .milliseconds(300))), "the connection stays open")
        }
    }

    /// One client address holds at most its share of the connections: past it, a new one is
    /// closed as it opens; once one of its own closes, it may open another.
    @Test func oneAddressHoldsAtMostItsShareOfTheConnections() async throws {
        try await TestServer.with(configure: { $0.server.maximumConnectionsPerAddress = 3 }) { server in
            let port = try #require(server.baseURL.port)
            var held = try (0..<3).map { _ in try RawConnection(port: port) }
            // Each is served (the handler counted it before this answer).
            for connection in held {
                try connection.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
                await connection.read(until: { $0.contains("\r\n\r\n") }, timeout: .seconds(5))
                #expect(connection.status == 200)
            }
            let fourth = try RawConnection(port: port)
            #expect(await fourth.waitUntilClosed(timeout: .seconds(5)), "a fourth connection from the address is closed")
            held.removeLast()
            // A hang-catcher, not a speed claim: a loaded machine (the whole suite at once) took
            // more than 5 s to see the closed connection go and serve a new one.
            try await eventually("a place is free again") {
                let again = try RawConnection(port: port)
                try again.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
                await again.read(until: { $0.contains("\r\n\r\n") }, timeout: .seconds(5))
                return again.status == 200
            }
            #expect(held.count == 2)
        }
    }

    /// One account's pushes under way are bounded before their bodies are read: while one push
    /// of the account waits for its body, a second one (another device of the account) is
    /// refused with 429 and Retry-After, its connection closed and its body never read; once the
    /// first is answered, pushes go through again.
    @Test func anAccountsPushesUnderWayAreBoundedBeforeTheirBodiesAreRead() async throws {
        try await TestServer.with(configure: { $0.server.maximumPushesInFlightPerAccount = 1 }) { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let mac = try await server.createDevice(accountToken: account.token)
            let port = try #require(server.baseURL.port)
            // The phone's token is looked up once, so that its held push is admitted at once.
            let first = try await server.raw(.POST, "/v1/sync/push", token: phone.token, body: Array(Self.oneDonation().utf8))
            #expect(first.status == 200)
            let held = try RawConnection(port: port)
            let event = Self.oneDonation(seq: 2)
            try held.send("POST /v1/sync/push HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(phone.token)\r\nContent-Type: application/json\r\nContent-Length: \(event.utf8.count)\r\n\r\n")
            try held.send(String(event.prefix(10)))
            // The held push is under way once the server has admitted it (a loaded machine may
            // take its time to read the request): then the mac's is refused as soon as it is
            // asked, before its body.
            try await eventually("the held push is admitted") { try await Self.gauge("shortcut_sync_pushes_under_way", of: server) == 1 }
            let refusal = try RawConnection(port: port)
            try refusal.send("POST /v1/sync/push HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(mac.token)\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
            await refusal.read(until: { $0.contains("\r\n\r\n") }, timeout: .seconds(5))
            #expect(refusal.status == 429, "\(refusal.text.prefix(200))")
            #expect(refusal.text.lowercased().contains("retry-after: 1"), "\(refusal.text.prefix(200))")
            #expect(await refusal.waitUntilClosed(timeout: .seconds(5)), "the refused push's connection is closed, its body unread")

            try held.send(String(event.dropFirst(10)))
            await held.read(until: { $0.contains("lastAcceptedSeq") }, timeout: .seconds(10))
            #expect(held.status == 200, "\(held.text.prefix(200))")
            // (The refusal told the account to wait a second: a push sent within it is held until then.)
            let after = try await server.raw(.POST, "/v1/sync/push", token: mac.token, body: Array(Self.oneDonation().utf8))
            #expect(after.status == 200, "a push goes through once the one under way is answered")
        }
    }

    /// Each device has a budget of reads (pulls and suggestion requests): past it, 429 with
    /// Retry-After before any query; the account's other devices read on. (The budget's clock
    /// stands still, so that a loaded machine's slowness cannot refill it during the test; the
    /// refill itself is `PushBudgetTests`'.)
    @Test func aDeviceThatReadsPastItsBudgetIs429WhileItsOtherDevicesRead() async throws {
        let stopped = ContinuousClock.now
        try await TestServer.with(monotonic: { stopped }, configure: { $0.server.deviceReadsPerSecond = 0.1; $0.server.deviceReadBurst = 3 }) { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let mac = try await server.createDevice(accountToken: account.token)
            for _ in 0..<2 { #expect(try await server.raw(.GET, "/v1/sync/pull", token: phone.token).status == 200) }
            #expect(try await server.raw(.GET, "/v1/suggestions", token: phone.token).status == 200)
            let refused = try await server.request(.GET, "/v1/sync/pull", token: phone.token)
            #expect(refused.status == 429, "\(refused.json)")
            #expect(refused.headers.first(name: "Retry-After") == "10", "one read each 10 s: \(refused.headers)")
            #expect((refused.json["detail"] as? String)?.contains("this device reads") == true, "\(refused.json)")
            #expect(try await server.raw(.GET, "/v1/suggestions", token: phone.token).status == 429, "suggestions share the budget")
            #expect(try await server.raw(.GET, "/v1/sync/pull", token: mac.token).status == 200, "another device has its own")
        }
    }

    /// Past the pushes the server runs at once, a push waits to start only so long: then it is
    /// 503 with Retry-After and nothing of it is stored. A pull is not queued behind it. Once a
    /// place is free, pushes go through again.
    @Test func aPushThatCannotStartInTimeIs503AndStoresNothing() async throws {
        try await TestServer.with(configure: { $0.server.maximumPushesRunning = 1; $0.server.pushStartWait = .milliseconds(300) }) { server in
            let held = try await server.createAccount()
            let heldPhone = try await server.createDevice(accountToken: held.token)
            let other = try await server.createAccount()
            let otherPhone = try await server.createDevice(accountToken: other.token)
            let heldAccount = held.id
            try await server.sql.withConnection { connection in
                // The held account's head is locked: its push runs, and waits for it.
                try await connection.query("BEGIN", logger: TestDatabase.shared.logger)
                try await connection.query("SELECT 1 FROM account_heads WHERE account_id = \(heldAccount) FOR UPDATE", logger: TestDatabase.shared.logger)
                async let heldPush = server.raw(.POST, "/v1/sync/push", token: heldPhone.token, body: Array(Self.oneDonation().utf8))
                try await Task.sleep(for: .milliseconds(500))
                // Answered while the held push still holds the only place (until the ROLLBACK below):
                // shed, not queued; and only after waiting its start wait, as the service's clock says.
                let shed = try await server.request(.POST, "/v1/sync/push", token: otherPhone.token, body: Array(Self.oneDonation().utf8))
                #expect(shed.status == 503, "\(shed.json)")
                #expect(shed.headers.first(name: "Retry-After") == "1")
                let heldFor = shed.headers.first(name: "Server-Timing").flatMap { Double($0.split(separator: "=").last ?? "") }
                #expect(try #require(heldFor) >= 300, "held \(String(describing: heldFor)) ms")
                let pull = try await server.raw(.GET, "/v1/sync/pull", token: otherPhone.token)
                #expect(pull.status == 200, "a pull is not queued behind the pushes")
                try await connection.query("ROLLBACK", logger: TestDatabase.shared.logger)
                #expect(try await heldPush.status == 200)
            }
            #expect(try await eventCount(server.sql) == 1, "the shed push stored nothing")
            let again = try await server.raw(.POST, "/v1/sync/push", token: otherPhone.token, body: Array(Self.oneDonation().utf8))
            #expect(again.status == 200)
        }
    }

    /// A push of one donation as JSON.
    static func oneDonation(seq: Int = 1) -> String {
        #"{"events":[{"id":"\#(UUID())","seq":\#(seq),"hlc":{"wallMillis":\#(Int64(Date().timeIntervalSince1970 * 1000)),"counter":0},"type":"donation","bundleId":"com.example.soup","identifier":"x","kind":"intent","intentType":"I","title":"t"}]}"#
    }

    /// An upload that stalls is cut off at the body deadline with 408 and its connection closed.
    /// The deadline is the whole body's, from its head: one that keeps sending a byte now and
    /// then (never idle) is cut off at it all the same.
    @Test(arguments: [false, true])
    func aBodyThatDoesNotArriveInTimeIsRefusedAndItsConnectionClosed(trickling: Bool) async throws {
        try await TestServer.with(configure: { $0.server.bodyDeadline = .seconds(1) }) { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            let connection = try RawConnection(port: try #require(server.baseURL.port))
            let started = ContinuousClock.now
            try connection.send("POST /v1/sync/push HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(device.token)\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{\"events\":[")
            var closed = false
            if trickling {
                // A byte every 100 ms for up to 6 s: 60 bytes, far from the 5,000 declared.
                for _ in 0..<60 where !closed {
                    try? connection.send(" ")
                    closed = await connection.waitUntilClosed(timeout: .milliseconds(100))
                }
            } else {
                closed = await connection.waitUntilClosed(timeout: .seconds(10))
            }
            let elapsed = ContinuousClock.now - started
            #expect(closed, "the connection is closed")
            #expect(connection.status == 408, "\(connection.text.prefix(120))")
            #expect(elapsed >= .milliseconds(900) && elapsed < .seconds(8), "cut off after \(elapsed)")
            #expect(try await eventCount(server.sql) == 0)
        }
    }

    /// A connection that says nothing is closed after the idle timeout; a stream, which the
    /// service keeps busy with its comments, is not.
    @Test func anIdleConnectionIsClosedButAStreamStaysOpen() async throws {
        try await TestServer.with(configure: { $0.server.idleTimeout = .seconds(1) }) { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            let port = try #require(server.baseURL.port)
            let silent = try RawConnection(port: port)
            let started = ContinuousClock.now
            #expect(await silent.waitUntilClosed(timeout: .seconds(8)))
            #expect(ContinuousClock.now - started >= .milliseconds(900))

            // TestServer sends keep-alive comments every second; the stream outlives three idle
            // timeouts. (Waited for, not counted after a fixed sleep: on a loaded machine a comment
            // may come late, which is not what this test is about.)
            let stream = try RawConnection(port: port)
            let opened = ContinuousClock.now
            try stream.send("GET /v1/sync/stream HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(device.token)\r\n\r\n")
            #expect(await stream.read(until: { $0.components(separatedBy: ": keep-alive").count > 3 }, timeout: .seconds(15)), "\(stream.text)")
            try await Task.sleep(until: opened + .seconds(3.5), clock: .continuous)
            #expect(await !stream.waitUntilClosed(timeout: .milliseconds(100)), "the stream is still open")
            #expect(stream.status == 200)
        }
    }

    /// A device holds at most four streams: a fifth ends the oldest, the others stay.
    @Test func aFifthStreamOfADeviceEndsItsOldest() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            let other = try await server.createDevice(accountToken: account.token, name: "iPad", platform: .iPadOS)
            let port = try #require(server.baseURL.port)
            func open(_ token: String) async throws -> RawConnection {
                let connection = try RawConnection(port: port)
                try connection.send("GET /v1/sync/stream HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(token)\r\n\r\n")
                #expect(await connection.read(until: { $0.contains(": keep-alive") }, timeout: .seconds(5)))
                return connection
            }
            var streams: [RawConnection] = []
            for _ in 0..<4 { streams.append(try await open(device.token)) }
            let otherDevice = try await open(other.token)
            streams.append(try await open(device.token))
            // The oldest stream's response ends (the last chunk of a chunked body).
            #expect(await streams[0].read(until: { $0.contains("\r\n0\r\n\r\n") }, timeout: .seconds(5)), "the oldest stream ended")
            for (index, stream) in streams.enumerated().dropFirst() {
                let before = stream.received.count
                #expect(await stream.read(until: { _ in stream.received.count > before }, timeout: .seconds(3)), "stream \(index) still gets comments")
                #expect(!stream.text.contains("\r\n0\r\n\r\n"), "stream \(index) did not end")
            }
            #expect(!otherDevice.text.contains("\r\n0\r\n\r\n"), "another device's stream is not counted")
        }
    }

    /// An account signs in at most 100 devices; a sign-out makes room again.
    @Test func theHundredAndFirstDeviceIsRefusedUntilOneSignsOut() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            var devices: [SimulatedDevice] = []
            for index in 0..<Limits.maxDevicesPerAccount {
                devices.append(try await server.createDevice(accountToken: account.token, name: "Device \(index)"))
            }
            let refused = try await server.raw(.POST, "/v1/devices", token: account.token, body: Array(#"{"name":"One more","platform":"iOS"}"#.utf8))
            #expect(refused.status == 409)
            #expect(refused.json["limit"] as? String == "devicesPerAccount")
            #expect(refused.json["type"] as? String == "https://shortcut-sync.invalid/problems/limit-reached")
            let stored = try await server.sql.query("SELECT count(*) FROM devices", logger: TestDatabase.shared.logger).decode(Int64.self).collectAll()
            #expect(stored == [Int64(Limits.maxDevicesPerAccount)])

            let signedOut = try await server.raw(.DELETE, "/v1/devices/\(devices[0].id)", token: account.token)
            #expect(signedOut.status == 204)
            let room = try await server.raw(.POST, "/v1/devices", token: account.token, body: Array(#"{"name":"One more","platform":"iOS"}"#.utf8))
            #expect(room.status == 201)
        }
    }

    /// A donation that would add a shortcut past the account's bound is refused with 409 and
    /// nothing of its push is stored; donations to shortcuts the account holds still go through,
    /// and a deletion makes room. (The bound is lowered here; its default is 10,000.)
    @Test func shortcutsBeyondTheAccountsBoundAreRefused() async throws {
        try await TestServer.with(configure: { $0.server.maximumShortcutsPerAccount = 5 }) { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            let four = try await server.raw(.POST, "/v1/sync/push", token: device.token,
                                            body: InputLimitTests.push((1...4).map { Self.donation(seq: $0, identifier: "soup-\($0)") }))
            #expect(four.status == 200)
            // A shortcut the account holds, donated again beside a new one, counts once: the fifth fits.
            let fifth = try await server.raw(.POST, "/v1/sync/push", token: device.token,
                                             body: InputLimitTests.push([Self.donation(seq: 5, identifier: "soup-1"), Self.donation(seq: 6, identifier: "soup-5")]))
            #expect(fifth.status == 200, "\(fifth.json)")
            _ = try await server.request(.GET, "/v1/sync/pull?waitFor=\(fifth.json["version"] as? Int ?? 0)", token: device.token)

            let sixth = try await server.raw(.POST, "/v1/sync/push", token: device.token,
                                             body: InputLimitTests.push([Self.donation(seq: 7, identifier: "soup-1"), Self.donation(seq: 8, identifier: "soup-6")]))
            #expect(sixth.status == 409)
            #expect(sixth.json["limit"] as? String == "shortcutsPerAccount")
            #expect(sixth.json.pointers == ["/events/1"])
            #expect(try await eventCount(server.sql) == 6)

            let again = try await server.raw(.POST, "/v1/sync/push", token: device.token, body: InputLimitTests.push([Self.donation(seq: 7, identifier: "soup-1")]))
            #expect(again.status == 200)
            let deletion = Self.event(seq: "8", type: "deletion", fields: #""bundleId":"com.example.soup","identifiers":["soup-2"]"#)
            let deleted = try await server.raw(.POST, "/v1/sync/push", token: device.token, body: InputLimitTests.push([deletion]))
            #expect(deleted.status == 200)
            _ = try await server.request(.GET, "/v1/sync/pull?waitFor=\(deleted.json["version"] as? Int ?? 0)", token: device.token)
            let room = try await server.raw(.POST, "/v1/sync/push", token: device.token, body: InputLimitTests.push([Self.donation(seq: 9, identifier: "soup-6")]))
            #expect(room.status == 200)
        }
    }

    /// One shortcut holds at most 16 donation groups (`groupIdentifier`s): each is a row that the
    /// fold and every suggestions request read. A push giving it a 17th is refused with 409,
    /// pointing at that donation, and nothing of it is stored; a deletion by group makes room.
    @Test func donationGroupsBeyondAShortcutsBoundAreRefused() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            func donation(seq: Int, group: Int) -> String {
                Self.event(seq: "\(seq)", type: "donation", fields: #""bundleId":"com.example.soup","identifier":"order","kind":"intent","intentType":"OrderSoupIntent","title":"Soup","groupIdentifier":"g\#(group)""#)
            }
            let bound = Limits.maxGroupsPerShortcut
            let tooMany = try await server.raw(.POST, "/v1/sync/push", token: device.token,
                                               body: InputLimitTests.push((1...bound + 1).map { donation(seq: $0, group: $0) }))
            #expect(tooMany.status == 409)
            #expect(tooMany.json["limit"] as? String == "groupsPerShortcut")
            #expect(tooMany.json.pointers == ["/events/\(bound)"])
            #expect(try await eventCount(server.sql) == 0)

            // Repeated groups count once: the bound itself is accepted.
            let full = try await server.raw(.POST, "/v1/sync/push", token: device.token,
                                            body: InputLimitTests.push((1...bound).map { donation(seq: $0, group: $0) } + [donation(seq: bound + 1, group: 1)]))
            #expect(full.status == 200)
            let next = bound + 2
            let oneMore = try await server.raw(.POST, "/v1/sync/push", token: device.token,
                                               body: InputLimitTests.push([donation(seq: next, group: 1), donation(seq: next + 1, group: bound + 1)]))
            #expect(oneMore.status == 409)
            #expect(oneMore.json.pointers == ["/events/1"])
            #expect(try await eventCount(server.sql) == Int64(bound + 1))

            let deletion = Self.event(seq: "\(next)", type: "deletion", fields: #""bundleId":"com.example.soup","groupIdentifier":"g2""#)
            #expect(try await server.raw(.POST, "/v1/sync/push", token: device.token, body: InputLimitTests.push([deletion])).status == 200)
            #expect(try await server.raw(.POST, "/v1/sync/push", token: device.token,
                                         body: InputLimitTests.push([donation(seq: next + 1, group: bound + 1)])).status == 200)
        }
    }

    /// A pull waiting for a change ends when its device is signed out, and gets no view.
    @Test func signingOutEndsAWaitingPull() async throws {
        try await Self.withWaitingVersion { server, account, device, version in
            let started = ContinuousClock.now
            async let waiting = server.request(.GET, "/v1/sync/pull?waitFor=\(version)&timeout=30000", token: device.token, timeout: .seconds(40))
            try await eventually("the pull waits") { try await Self.waitingPulls(server) == 1 }
            let signedOut = try await server.raw(.DELETE, "/v1/devices/\(device.id)", token: account.token)
            #expect(signedOut.status == 204)
            let answer = try await waiting
            #expect(answer.status == 401)
            // Its timeout is 30 s: well before that, whatever the machine's load.
            #expect(ContinuousClock.now - started < .seconds(25), "the pull ended with the sign-out, not its timeout")
        }
    }

    /// A device has at most four pulls waiting: a fifth ends the oldest's wait, which answers
    /// with the view there is; the others wait on (until the device is signed out here).
    @Test func aFifthWaitingPullOfADeviceEndsTheOldestsWait() async throws {
        try await Self.withWaitingVersion { server, account, device, version in
            let started = ContinuousClock.now
            try await withThrowingTaskGroup(of: (index: Int, status: Int, after: Duration).self) { group in
                for index in 0..<5 {
                    group.addTask {
                        let answer = try await server.request(.GET, "/v1/sync/pull?waitFor=\(version)&timeout=30000", token: device.token, timeout: .seconds(40))
                        return (index, answer.status, ContinuousClock.now - started)
                    }
                    // Each one waits before the next is sent, so that the first is the oldest.
                    try await eventually("pull \(index) waits") { try await Self.waitingPulls(server) == min(index + 1, 4) }
                }
                let first = try #require(try await group.next())
                #expect(first.index == 0 && first.status == 200, "\(first)")
                // Its timeout is 30 s: well before that, whatever the machine's load (10.4 s was seen
                // on a loaded run for the five pulls sent one after another).
                #expect(first.after < .seconds(25), "the oldest wait ended with the fifth, not its timeout")
                #expect(try await server.raw(.DELETE, "/v1/devices/\(device.id)", token: account.token).status == 204)
                for try await rest in group {
                    #expect(rest.status == 401, "\(rest)")
                }
            }
        }
    }

    /// An account and device, one donation the device pushed, and the account's next version:
    /// a pull that waits for it waits until it times out or is ended.
    static func withWaitingVersion(
        _ body: (TestServer, (id: UUID, token: String), SimulatedDevice, Int) async throws -> Void
    ) async throws {
        try await TestServer.with(runsWorker: false) { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            let pushed = try await server.raw(.POST, "/v1/sync/push", token: device.token, body: InputLimitTests.push([Self.donation(seq: 1, identifier: "tomato")]))
            try await body(server, account, device, try #require(pushed.json["version"] as? Int) + 1)
        }
    }

    /// How many pulls wait, as the service's `/metrics` says.
    static func waitingPulls(_ server: TestServer) async throws -> Int? {
        try await gauge("shortcut_sync_waiting_pulls", of: server)
    }

    /// A gauge's value, as the service's `/metrics` says.
    static func gauge(_ name: String, of server: TestServer) async throws -> Int? {
        let metrics = try await ShutdownTests.metrics(server.operatorURL.absoluteString)
        return metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ")[1]) }.map { Int($0) }
    }

    /// Erasing an account ends its open streams and its tokens (through the erasure's notification).
    @Test func erasingAnAccountEndsItsStreams() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            let stream = try RawConnection(port: try #require(server.baseURL.port))
            try stream.send("GET /v1/sync/stream HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(device.token)\r\n\r\n")
            #expect(await stream.read(until: { $0.contains(": keep-alive") }, timeout: .seconds(5)))
            _ = try await OperatorStore(client: server.sql, logger: TestDatabase.shared.logger).erase(account: account.id)
            #expect(await stream.read(until: { $0.contains("\r\n0\r\n\r\n") }, timeout: .seconds(5)), "the stream ended")
            // The token was looked up (and kept, `TokenCache`) to open the stream; the erasure's
            // notification took it away with the stream.
            #expect(try await server.raw(.GET, "/v1/sync/pull", token: device.token).status == 401)
            #expect(try await server.raw(.POST, "/v1/devices", token: account.token, body: Array(#"{"name":"x","platform":"iOS"}"#.utf8)).status == 401)
        }
    }
}

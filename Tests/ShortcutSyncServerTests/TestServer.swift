import AsyncHTTPClient
import Hummingbird
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import Foundation
import HTTPTypes
import Logging
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import PostgresNIO
import ServiceLifecycle
import ShortcutSyncAPI
import ShortcutSyncClient
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncApp
import ShortcutSyncDomain
import ShortcutSyncServer
import ShortcutSyncStore

/// The whole service, started by a test on a free port over a fresh database, and clients of it
/// generated from `openapi.yaml`.
struct TestServer {
    let baseURL: URL
    /// The operators' listener: `/metrics`, `/readyz`.
    let operatorURL: URL
    let adminToken: String
    let database: DatabaseURL
    /// A pool on the service's database, for checking what is stored.
    let sql: PostgresClient

    /// Runs `body` with a started service over a fresh database; stops it afterwards.
    static func with(
        runsWorker: Bool = true,
        degradedLag: Int64 = 10_000,
        pullPageSize: Int = ProjectionStore.defaultPullPageSize,
        clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
        monotonic: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
        configure: (inout ServeConfiguration) -> Void = { _ in },
        _ body: (TestServer) async throws -> Void
    ) async throws {
        try await TestDatabase.withClient(maximumConnections: 4) { sql, url in
            try await with(database: url, sql: sql, runsWorker: runsWorker, degradedLag: degradedLag, pullPageSize: pullPageSize,
                           clock: clock, monotonic: monotonic, configure: configure, body)
        }
    }

    /// Runs `body` with a service started over the database at `database`; stops it afterwards.
    static func with(
        database url: DatabaseURL,
        sql: PostgresClient,
        runsWorker: Bool = true,
        degradedLag: Int64 = 10_000,
        pullPageSize: Int = ProjectionStore.defaultPullPageSize,
        clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
        monotonic: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
        configure: (inout ServeConfiguration) -> Void = { _ in },
        _ body: (TestServer) async throws -> Void
    ) async throws {
        let adminToken = "admin-\(UUID())"
        var server = ServerConfiguration(
            host: "127.0.0.1", port: 0, adminToken: adminToken, maximumConnections: 20, keepAliveInterval: .seconds(1), degradedLag: degradedLag)
        server.pullPageSize = pullPageSize
        // Not the pushes' 16: the suites' services run at once on one cluster, and each would hold
        // its kept connections open for all its test.
        server.connectionsKeptOpen = 2
        // Tests poll and page as fast as they like; the read budget's own test sets one.
        server.deviceReadsPerSecond = 1_000_000
        server.deviceReadBurst = 1_000_000
        // Tests sign devices in and out by the hundred; the sign-ins' budget's own tests set one.
        server.deviceSignInsPerHour = 1_000_000_000
        server.deviceSignInBurst = 1_000_000
        var configuration = ServeConfiguration(server: server, database: url, runsWorker: runsWorker)
        configure(&configuration)
        try await withRunningService(configuration, logger: TestDatabase.shared.logger, clock: clock, monotonic: monotonic) { running in
            try await body(TestServer(baseURL: running.baseURL, operatorURL: running.operatorURL, adminToken: adminToken, database: url, sql: sql))
        }
    }

    /// A generated client that sends `token` as its bearer token.
    func client(token: String?) -> Client {
        Client(serverURL: baseURL, transport: AsyncHTTPClientTransport(), middlewares: [BearerToken(token: token)])
    }

    /// A new account and its token.
    func createAccount() async throws -> (id: UUID, token: String) {
        let created = try await client(token: adminToken).createAccount().created.body.json
        return (UUID(uuidString: created.accountId)!, created.accountToken)
    }

    /// A new device of the account, and a simulated device to drive it.
    func createDevice(accountToken: String, name: String = "iPhone", platform: Components.Schemas.Platform = .iOS) async throws -> SimulatedDevice {
        let created = try await client(token: accountToken).createDevice(body: .json(.init(name: name, platform: platform))).created.body.json
        return SimulatedDevice(id: UUID(uuidString: created.deviceId)!, token: created.deviceToken, client: client(token: created.deviceToken))
    }
}

/// A device as the tests drive it: its own seq counter and clock, and what it has pulled.
final class SimulatedDevice: @unchecked Sendable {
    let id: UUID
    let token: String
    let client: Client
    var seq: Int64 = 0
    var clock = HybridLogicalClock()
    /// Events made but not pushed yet (the device is offline).
    var outbox: [Event] = []
    /// Everything this device pushed and had accepted.
    var accepted: [AcceptedEvent] = []
    var view = DeviceView.empty
    var cursor: String?

    init(id: UUID, token: String, client: Client) {
        self.id = id
        self.token = token
        self.client = client
    }

    /// Records an event made at physical time `millis`.
    @discardableResult
    func record(_ body: EventBody, at millis: Int64) -> Event {
        seq += 1
        let event = Event(seq: seq, hlc: clock.tick(physicalMillis: millis), body: body)
        outbox.append(event)
        return event
    }

    /// Pushes the outbox; returns the account's version after it (a pull's `waitFor`).
    @discardableResult
    func push() async throws -> Int64 {
        let answer = try await client.push(body: .json(.init(events: outbox))).ok.body.json
        accepted += outbox.map { AcceptedEvent(deviceId: id, event: $0) }
        outbox = []
        return answer.version
    }

    /// Pulls (with the cursor, if any) and applies the answer to the local view, following its
    /// pages (`more: true`) to the last, as a device does. Returns the pages as one answer: the
    /// first page's `reset`, the last one's cursor, seq, clock and `more` (false), every page's
    /// items in order.
    @discardableResult
    func pull(waitFor version: Int64? = nil, fresh: Bool = false) async throws -> Components.Schemas.PullResponse {
        var whole = try await pullPage(waitFor: version, fresh: fresh)
        while whole.more {
            let next = try await pullPage()
            whole.cursor = next.cursor
            whole.more = next.more
            whole.lastAcceptedSeq = next.lastAcceptedSeq
            whole.hlc = next.hlc
            whole.shortcuts.upserted += next.shortcuts.upserted
            whole.shortcuts.removed += next.shortcuts.removed
            whole.voiceShortcuts.upserted += next.voiceShortcuts.upserted
            whole.voiceShortcuts.removed += next.voiceShortcuts.removed
        }
        return whole
    }

    /// One pull (with the cursor, if any), one page: applies it to the local view and keeps its cursor.
    @discardableResult
    func pullPage(waitFor version: Int64? = nil, fresh: Bool = false) async throws -> Components.Schemas.PullResponse {
        let answer = try await client.pull(query: .init(cursor: fresh ? nil : cursor, waitFor: version, timeout: 10_000)).ok.body.json
        let changes = PullAnswer(answer).changes
        view = answer.reset ? DeviceView.empty.applying(changes) : view.applying(changes)
        cursor = answer.cursor
        clock.receive(answer.hlc, physicalMillis: 0)
        return answer
    }
}

extension TestServer {
    /// A request built by hand, for what the generated client refuses to send (malformed bodies).
    func raw(_ method: HTTPMethod, _ path: String, token: String?, body: [UInt8]? = nil) async throws -> (status: Int, json: [String: Any]) {
        let answer = try await request(method, path, token: token, body: body)
        return (answer.status, answer.json)
    }

    /// `GET` of the operators' listener (`/readyz`, `/metrics`): the answer's status and JSON body.
    func operators(_ path: String) async throws -> (status: Int, json: [String: Any]) {
        let answer = try await sendRequest(.GET, operatorURL.absoluteString + path, token: nil)
        return (answer.status, answer.json)
    }

    /// A request built by hand, with its answer's status, headers and JSON body.
    func request(
        _ method: HTTPMethod, _ path: String, token: String?, body: [UInt8]? = nil,
        contentType: String = "application/json", timeout: TimeAmount = .seconds(30)
    ) async throws -> (status: Int, headers: HTTPHeaders, json: [String: Any]) {
        try await sendRequest(method, baseURL.absoluteString + path, token: token, body: body, contentType: contentType, timeout: timeout)
    }
}

/// A request built by hand to any URL, with its answer's status, headers and JSON body (empty when
/// the body is not a JSON object).
func sendRequest(
    _ method: HTTPMethod, _ url: String, token: String?, body: [UInt8]? = nil,
    contentType: String = "application/json", headers: [(String, String)] = [], timeout: TimeAmount = .seconds(30)
) async throws -> (status: Int, headers: HTTPHeaders, json: [String: Any]) {
    var request = HTTPClientRequest(url: url)
    request.method = method
    if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
    request.headers.add(contentsOf: headers)
    if let body {
        request.headers.add(name: "Content-Type", value: contentType)
        request.body = .bytes(body)
    }
    let response = try await HTTPClient.shared.execute(request, timeout: timeout)
    let data = try await response.body.collect(upTo: 1 << 20)
    let json = (try? JSONSerialization.jsonObject(with: Data(buffer: data))) as? [String: Any] ?? [:]
    return (Int(response.status.code), response.headers, json)
}

extension Dictionary where Key == String, Value == Any {
    /// The pointers of a problem's `errors`.
    var pointers: [String] {
        (self["errors"] as? [[String: Any]] ?? []).compactMap { $0["pointer"] as? String }
    }
}

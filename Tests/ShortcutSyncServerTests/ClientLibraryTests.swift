import Foundation
import HTTPTypes
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import PostgresNIO
import ShortcutSyncAPI
import ShortcutSyncClient
import ShortcutSyncChildProcess
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import ShortcutSyncWorker
import Synchronization
import Testing

/// `ShortcutSyncClient` against the real service: the outbox survives a killed app, devices that
/// were offline converge, 503s are retried, resets rebuild the view, the stream reconnects.
@Suite struct ClientLibraryTests {
    /// A device's outbox file, in a folder of this test process's own: its journal files
    /// (`-wal`, `-shm`) go with the folder, which the next run removes with this run's cluster.
    static func storage() -> String {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("shortcut-sync-tests-\(getpid())/clients")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.appendingPathComponent("\(UUID().uuidString).sqlite").path
    }

    static func client(_ server: TestServer, token: String, storage: String, wrapping: (any SyncTransport) -> any SyncTransport = { $0 },
                       http: any ClientTransport = AsyncHTTPClientTransport()) throws -> ShortcutSyncClient {
        var configuration = ShortcutSyncClient.Configuration(bundleId: "com.example.soup", storagePath: storage)
        configuration.initialBackoff = .milliseconds(20)
        let transport = OpenAPISyncTransport(serverURL: server.baseURL, deviceToken: token, transport: http)
        return try ShortcutSyncClient(configuration: configuration, transport: wrapping(transport), logger: TestDatabase.shared.logger)
    }

    static func soup(_ identifier: String, title: String? = nil) -> IntentDonation {
        IntentDonation(intentType: "OrderSoupIntent", identifier: identifier, title: title ?? "\(identifier.capitalized) soup", groupIdentifier: "soups")
    }

    /// The device's events as the log holds them: (seq, event id).
    static func stored(_ server: TestServer, device: UUID) async throws -> [(Int64, UUID)] {
        try await server.sql.query("SELECT seq, event_id FROM events WHERE device_id = \(device) ORDER BY seq")
            .decode((Int64, UUID).self).collectAll().map { ($0.0, $0.1) }
    }

    /// An app killed twice — before its push reached the service, then after the service stored
    /// it but before the app heard back — reopens, syncs, and the log holds each event once.
    @Test func anAppKilledAroundItsPushLosesNothingAndSendsNothingTwice() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let storage = Self.storage()
            defer { try? FileManager.default.removeItem(atPath: storage) }

            // 1. Donations recorded; the app dies while its push hangs on the network.
            do {
                let pushing = HangingTransport.Flag()
                let first = try Self.client(server, token: phone.token, storage: storage) { _ in HangingTransport(pushing: pushing) }
                try await first.donate(Self.soup("tomato"))
                try await first.donate(Self.soup("leek"))
                let running = Task { try await first.run() }
                try await eventually("the push hangs on the network") { pushing.isSet }
                running.cancel()
                _ = await running.result
            }
            #expect(try await Self.stored(server, device: phone.id).isEmpty)

            // 2. Reopened: one more donation; the service stores the push, the app dies before the answer.
            do {
                let second = try Self.client(server, token: phone.token, storage: storage) { StoresThenDies($0) }
                #expect(try await second.pendingCount() == 2)
                try await second.donate(Self.soup("kale"))
                await #expect(throws: StoresThenDies.Died.self) { try await second.sync() }
            }
            #expect(try await Self.stored(server, device: phone.id).count == 3)

            // 3. Reopened for good: the outbox is sent again, and nothing is stored twice.
            let third = try Self.client(server, token: phone.token, storage: storage)
            #expect(try await third.pendingCount() == 3)
            try await third.sync()
            #expect(try await third.pendingCount() == 0)
            let stored = try await Self.stored(server, device: phone.id)
            #expect(stored.map(\.0) == [1, 2, 3])
            #expect(Set(stored.map(\.1)).count == 3)
            #expect(await third.shortcuts().map(\.identifier) == ["kale", "leek", "tomato"])

            // 4. Reopened offline: the last view is there without the network.
            let offline = try Self.client(server, token: phone.token, storage: storage) { _ in HangingTransport() }
            #expect(await offline.shortcuts().map(\.identifier) == ["kale", "leek", "tomato"])
        }
    }

    /// The app's storage was wiped (reinstalled, restored from an old backup): its new outbox
    /// starts again at seq 1, the service answers 409 with the seq it expects, and the client
    /// numbers its waiting events from there.
    @Test func aDeviceWhoseStorageWasWipedNumbersItsEventsFromWhatTheServiceExpects() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let before = try Self.client(server, token: phone.token, storage: Self.storage())
            try await before.donate(Self.soup("tomato"))
            try await before.donate(Self.soup("leek"))
            try await before.sync()

            let wiped = try Self.client(server, token: phone.token, storage: Self.storage())
            try await wiped.donate(Self.soup("kale"))
            try await wiped.sync()
            #expect(try await wiped.pendingCount() == 0)
            #expect(try await Self.stored(server, device: phone.id).map(\.0) == [1, 2, 3])
            #expect(await wiped.shortcuts().map(\.identifier) == ["kale", "leek", "tomato"])
            try await wiped.donate(Self.soup("pea"))
            try await wiped.sync()
            #expect(try await Self.stored(server, device: phone.id).map(\.0) == [1, 2, 3, 4])
        }
    }

    /// Two devices that worked offline — donations, a deletion, phrases that collide — sync in
    /// any order and end with the view the domain folds of everything they did.
    @Test func twoDevicesThatWorkedOfflineConvergeOnTheDomainFold() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let (phoneDevice, macDevice) = (try await server.createDevice(accountToken: account.token),
                                            try await server.createDevice(accountToken: account.token, name: "Mac", platform: .macOS))
            let phone = try Self.client(server, token: phoneDevice.token, storage: Self.storage())
            let mac = try Self.client(server, token: macDevice.token, storage: Self.storage())

            try await phone.donate(Self.soup("tomato"))
            try await phone.donate(Self.soup("leek"))
            try await mac.donate(Self.soup("tomato", title: "Tomato soup, large"))
            try await mac.deleteDonations(withIdentifiers: ["leek"])
            let tomato = ShortcutView(latest: Donation(bundleId: "com.example.soup", identifier: "tomato", kind: .intent, title: "Tomato soup"),
                                      donationCount: 1, lastDonatedAt: .zero)
            try await phone.addVoiceShortcut(phrase: "Soup time", for: tomato)
            try await mac.addVoiceShortcut(phrase: "soup TIME", for: tomato)

            try await mac.sync()
            try await phone.sync()
            try await mac.sync()

            // The pushes folded their events: the account's log, read at once, is what the views show.
            let log = try await PostgresEventStore(client: server.sql, logger: TestDatabase.shared.logger).readStream(account: account.id, after: 0, limit: 7)
            #expect(log.map(\.version) == Array(1...6))
            let expected = AccountState(folding: log.map(\.accepted))
            #expect(await phone.currentView == expected.view(forDevice: phoneDevice.id))
            #expect(await mac.currentView == expected.view(forDevice: macDevice.id))
            #expect(await phone.currentView == mac.currentView)
            #expect(await phone.voiceShortcuts().filter { $0.status == .phraseConflict }.count == 1)
        }
    }

    /// The service answers 503 with `Retry-After: 1` twice: the running client waits as told,
    /// tries again and its donation arrives.
    @Test func aServiceAnswering503IsRetriedAfterWhatItSays() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            let unavailable = UnavailableFirst(pushes: 2, transport: AsyncHTTPClientTransport())
            let client = try Self.client(server, token: device.token, storage: Self.storage(), http: unavailable)
            let started = ContinuousClock.now
            let running = Task { try await client.run() }
            defer { running.cancel() }
            try await client.donate(Self.soup("tomato"))
            try await eventually("the donation is stored") { try await Self.stored(server, device: device.id).count == 1 }
            #expect(unavailable.refused == 2)
            #expect(ContinuousClock.now - started >= .seconds(2), "two Retry-After: 1 are waited out")
            try await eventually("the view shows it") { await client.shortcuts().count == 1 }
        }
    }

    /// A device that reports other apps gets `reset: true` and its whole view anew: what it
    /// had of the apps it no longer has is gone.
    @Test func aResetReplacesTheWholeView() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let device = try await server.createDevice(accountToken: account.token)
            var settings = ShortcutSyncClient.Configuration(bundleId: "com.example.tea", storagePath: Self.storage())
            settings.initialBackoff = .milliseconds(20)
            let resets = ResetWatcher(OpenAPISyncTransport(serverURL: server.baseURL, deviceToken: device.token, transport: AsyncHTTPClientTransport()))
            let client = try ShortcutSyncClient(configuration: settings, transport: resets, logger: TestDatabase.shared.logger)
            try await client.donate(IntentDonation(intentType: "OrderTeaIntent", identifier: "green", title: "Green tea"))
            try await client.sync()
            #expect(await client.shortcuts().map(\.identifier) == ["green"])
            #expect(!resets.sawReset)

            // Only the soup app is installed now: the answer is the whole (soup-only) view, which
            // has no removal of the tea item to apply; kept as a change, the tea would stay.
            try await client.reportInstalledApps(["com.example.soup"])
            try await client.sync()
            #expect(resets.sawReset)
            #expect(await client.shortcuts().isEmpty)
        }
    }

    /// The service stops and starts again on the same port: the running client's stream
    /// reconnects, and a change another device pushes afterwards reaches it.
    @Test func theStreamReconnectsAfterTheServiceRestarts() async throws {
        let directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("shortcut-sync-client-\(UUID().uuidString.prefix(8))")
        let first = try await ServeProcess(dataDirectory: directory)
        defer { first.forceStop() }
        try await ShutdownTests.waitUntilReady(first)
        let base = URL(string: first.baseURL)!
        let http = AsyncHTTPClientTransport()
        let admin = Client(serverURL: base, transport: http, middlewares: [BearerToken(token: first.adminToken)])
        let account = try await admin.createAccount().created.body.json
        let owner = Client(serverURL: base, transport: http, middlewares: [BearerToken(token: account.accountToken)])
        let listenerToken = try await owner.createDevice(body: .json(.init(name: "iPad", platform: .iPadOS))).created.body.json.deviceToken
        let pusherToken = try await owner.createDevice(body: .json(.init(name: "iPhone", platform: .iOS))).created.body.json.deviceToken

        var configuration = ShortcutSyncClient.Configuration(bundleId: "com.example.soup", storagePath: Self.storage())
        configuration.initialBackoff = .milliseconds(50)
        configuration.maximumBackoff = .milliseconds(500)
        let listener = try ShortcutSyncClient(configuration: configuration,
                                              transport: OpenAPISyncTransport(serverURL: base, deviceToken: listenerToken, transport: http),
                                              logger: TestDatabase.shared.logger)
        var pusherConfiguration = configuration
        pusherConfiguration.storagePath = Self.storage()
        let pusher = try ShortcutSyncClient(configuration: pusherConfiguration,
                                            transport: OpenAPISyncTransport(serverURL: base, deviceToken: pusherToken, transport: http),
                                            logger: TestDatabase.shared.logger)
        let running = Task { try await listener.run() }
        defer { running.cancel() }
        try await pusher.donate(Self.soup("tomato"))
        try await pusher.sync()
        try await eventually("the listener sees the first donation") { await listener.shortcuts().count == 1 }

        first.send(SIGTERM)
        #expect(try await first.waitForExit(timeout: .seconds(15)) != nil)
        let second = try await ServeProcess(dataDirectory: directory, port: first.port)
        defer { second.forceStop() }
        try await ShutdownTests.waitUntilReady(second)

        try await pusher.donate(Self.soup("leek"))
        try await pusher.sync()
        try await eventually("the listener, reconnected, sees the second", timeout: .seconds(30)) { await listener.shortcuts().count == 2 }
        second.send(SIGTERM)
        _ = try await second.waitForExit(timeout: .seconds(15))
    }
}

/// A network where pushes never arrive.
struct HangingTransport: SyncTransport {
    /// Set once, when the first push is under way.
    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        var isSet: Bool { value.load(ordering: .relaxed) }
        func set() { value.store(true, ordering: .relaxed) }
    }

    var pushing = Flag()

    func push(_ events: [Event]) async throws -> PushOutcome {
        pushing.set()
        try await Task.sleep(for: .seconds(3600))
        throw CancellationError()
    }

    func pull(cursor: String?, waitFor version: Int64?, timeoutMillis: Int?) async throws -> PullAnswer {
        try await Task.sleep(for: .seconds(3600))
        throw CancellationError()
    }

    func pokes() async throws -> AsyncThrowingStream<Int64, any Error> {
        try await Task.sleep(for: .seconds(3600))
        throw CancellationError()
    }
}

/// Pushes for real, then dies before the app hears the answer.
struct StoresThenDies: SyncTransport {
    struct Died: Error {}
    let real: any SyncTransport

    init(_ real: any SyncTransport) {
        self.real = real
    }

    func push(_ events: [Event]) async throws -> PushOutcome {
        _ = try await real.push(events)
        throw Died()
    }

    func pull(cursor: String?, waitFor version: Int64?, timeoutMillis: Int?) async throws -> PullAnswer {
        try await real.pull(cursor: cursor, waitFor: version, timeoutMillis: timeoutMillis)
    }

    func pokes() async throws -> AsyncThrowingStream<Int64, any Error> {
        try await real.pokes()
    }
}

/// Remembers whether a pull answered with a reset.
final class ResetWatcher: SyncTransport {
    let real: any SyncTransport
    private let reset = Mutex(false)
    var sawReset: Bool { reset.withLock { $0 } }

    init(_ real: any SyncTransport) {
        self.real = real
    }

    func push(_ events: [Event]) async throws -> PushOutcome {
        try await real.push(events)
    }

    func pull(cursor: String?, waitFor version: Int64?, timeoutMillis: Int?) async throws -> PullAnswer {
        let answer = try await real.pull(cursor: cursor, waitFor: version, timeoutMillis: timeoutMillis)
        if answer.reset && cursor != nil { reset.withLock { $0 = true } }
        return answer
    }

    func pokes() async throws -> AsyncThrowingStream<Int64, any Error> {
        try await real.pokes()
    }
}

/// An HTTP transport whose first `pushes` pushes get `503` with `Retry-After: 1`, as a service
/// whose database is restarting answers.
final class UnavailableFirst: ClientTransport {
    let transport: any ClientTransport
    private let remaining: Mutex<Int>
    private let count = Mutex(0)
    var refused: Int { count.withLock { $0 } }

    init(pushes: Int, transport: any ClientTransport) {
        remaining = Mutex(pushes)
        self.transport = transport
    }

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        let refuse = operationID == "push" && remaining.withLock { left in
            defer { left = max(left - 1, 0) }
            return left > 0
        }
        guard refuse else { return try await transport.send(request, body: body, baseURL: baseURL, operationID: operationID) }
        count.withLock { $0 += 1 }
        var response = HTTPResponse(status: .serviceUnavailable)
        response.headerFields[.retryAfter] = "1"
        response.headerFields[.contentType] = "application/problem+json"
        return (response, HTTPBody(#"{"type":"about:blank","title":"Service Unavailable","status":503}"#))
    }
}

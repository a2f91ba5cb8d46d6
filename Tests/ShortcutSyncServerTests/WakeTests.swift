import APNsStandIn
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import OpenAPIAsyncHTTPClient
import PostgresNIO
import ShortcutSyncAPI
import ShortcutSyncApp
import ShortcutSyncChildProcess
import ShortcutSyncClient
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncServer
import ShortcutSyncStore
import ShortcutSyncTestSupport
import ShortcutSyncWake
import Synchronization
import Testing

/// Background wakes end to end (DESIGN §6): the service's waker, the real database, the stand-in
/// for APNs. A sleeping device is woken once after a change, not again within the interval, not
/// at all when it pulled; two servers wake it once; a change no waker heard is found; the worker
/// wakes too. APNs' answers are `WakeAnswerTests`'.
/// One test at a time: each runs a service, a stand-in and a waker, and together they would
/// load the machine that the other suites' timed expectations share.
@Suite(.serialized) struct WakeTests {
    /// An account with a device that changes things and one that sleeps with a push token.
    struct Household {
        let account: (id: UUID, token: String)
        let phone: SimulatedDevice
        let pad: SimulatedDevice
        let padToken: String
    }

    static func household(_ server: TestServer) async throws -> Household {
        let account = try await server.createAccount()
        let phone = try await server.createDevice(accountToken: account.token)
        let pad = try await server.createDevice(accountToken: account.token, name: "iPad", platform: .iPadOS)
        let token = apnsToken()
        #expect(try await server.registerPushToken(token, for: pad).status == 204)
        return Household(account: account, phone: phone, pad: pad, padToken: token)
    }

    /// The phone changes something; returns the account's version after it.
    @discardableResult
    static func change(_ household: Household, _ identifier: String = UUID().uuidString) async throws -> Int64 {
        household.phone.record(soupDonation(identifier), at: Int64(Date().timeIntervalSince1970 * 1000))
        return try await household.phone.push()
    }

    /// The stream hub and the waker of one server hear the database through one LISTEN session
    /// (`SharedNotifications`), not one each.
    @Test func theHubAndTheWakerShareOneListenSession() async throws {
        try await TestServer.withWakes { server, standIn in
            let home = try await Self.household(server)
            try await Self.change(home)
            // The waker heard the change (it woke the iPad), so both listen by now.
            #expect(try await standIn.waitForRequests(1, within: .seconds(20)).count == 1)
            let sessions = try await server.sql.query(PostgresQuery(unsafeSQL: """
                SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND \(ListenSession.predicate)
                """), logger: TestDatabase.shared.logger).decode(Int64.self).collectAll()
            #expect(sessions == [1])
        }
    }

    @Test func aSleepingDeviceIsWokenOnceAfterAChange() async throws {
        try await TestServer.withWakes { server, standIn in
            let home = try await Self.household(server)
            let version = try await Self.change(home)
            let received = try await standIn.waitForRequests(1, within: .seconds(20))
            #expect(received.count == 1)
            let wake = try #require(received.first)
            #expect(wake.deviceToken == home.padToken)
            #expect(wake.status == 200)
            #expect(wake.headers["apns-push-type"] == "background")
            #expect(wake.headers["apns-priority"] == "5")
            #expect(wake.headers["apns-topic"] == "com.example.shortcuts")
            #expect(wake.headers["apns-collapse-id"] == home.account.id.uuidString.lowercased())
            #expect(wake.body == #"{"aps":{"content-available":1}}"#)
            try await eventually("the wake is counted") {
                try await server.wakeState(of: home.pad, account: home.account.id)?.wakeCount == 1
            }
            let state = try #require(try await server.wakeState(of: home.pad, account: home.account.id))
            #expect(state.wokenVersion == version)
            #expect(state.lastWakeAt != nil)
            // The phone pushed it: it is not woken for its own change (it has no token anyway),
            // and the device woken pulls, which is recorded.
            try await home.pad.pull()
            #expect(try await server.wakeState(of: home.pad, account: home.account.id)?.pulledVersion == version)
        }
    }

    @Test func aSecondChangeWithinTheIntervalWaitsForItsEnd() async throws {
        try await TestServer.withWakes(interval: .seconds(600)) { server, standIn in
            let home = try await Self.household(server)
            try await Self.change(home)
            _ = try await standIn.waitForRequests(1, within: .seconds(20))
            try await eventually("the first wake is recorded") {
                try await server.wakeState(of: home.pad, account: home.account.id)?.wakeCount == 1
            }
            let first = try #require(try await server.wakeState(of: home.pad, account: home.account.id)?.lastWakeAt)
            let version = try await Self.change(home)
            // The waker takes the second wake and puts it off to the interval's end.
            try await eventually("the second wake is put off to 10 minutes after the first") {
                guard let due = try await server.wakeState(of: home.pad, account: home.account.id)?.dueAt else { return false }
                return abs(due.timeIntervalSince(first) - 600) < 1
            }
            #expect(standIn.received.count == 1, "no second wake within the interval")
            let state = try #require(try await server.wakeState(of: home.pad, account: home.account.id))
            #expect(state.wokenVersion < version)
        }
    }

    @Test func aDeviceBehindIsWokenAgainOnceTheIntervalIsOver() async throws {
        try await TestServer.withWakes(interval: .seconds(2)) { server, standIn in
            let home = try await Self.household(server)
            try await Self.change(home)
            let first = try await standIn.waitForRequests(1, within: .seconds(20))[0]
            try await Self.change(home)
            let both = try await standIn.waitForRequests(2, within: .seconds(20))
            #expect(both.count == 2)
            // Not sooner than the interval allows (the clocks are the same machine's; a slow
            // first delivery could shorten the gap a little, never by a second).
            #expect(both[1].receivedAt.timeIntervalSince(first.receivedAt) >= 1.0)
        }
    }

    @Test func aDeviceWithAnOpenStreamPullsAndIsNotWoken() async throws {
        // Two seconds for the iPad's app to pull a change it is told of: far more than it needs.
        try await TestServer.withWakes(delay: .seconds(2)) { server, standIn in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let padDevice = try await server.createDevice(accountToken: account.token, name: "iPad", platform: .iPadOS)
            let watch = try await server.createDevice(accountToken: account.token, name: "Watch", platform: .watchOS)
            let home = Household(account: account, phone: phone, pad: padDevice, padToken: apnsToken())
            try await Self.change(home, "leek")
            try await server.registerPushToken(home.padToken, for: padDevice)
            // The watch sleeps: its wake says the waker has decided on this change.
            let watchToken = apnsToken()
            try await server.registerPushToken(watchToken, for: watch)
            // The iPad's app is open: its client holds the stream and pulls when poked.
            let storage = NSTemporaryDirectory() + "shortcut-sync-wake-\(UUID().uuidString).sqlite"
            defer { try? FileManager.default.removeItem(atPath: storage) }
            let pad = try ClientLibraryTests.client(server, token: padDevice.token, storage: storage)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await pad.run() }
                defer { group.cancelAll() }
                try await eventually("the iPad's app has pulled what there was") {
                    await pad.shortcuts().map(\.identifier).contains("leek")
                }
                let version = try await Self.change(home, "tomato")
                let received = try await standIn.waitForRequests(1, within: .seconds(20))
                #expect(received.map(\.deviceToken) == [watchToken])
                // The watch's wake was claimed with the iPad's (same account, same time): by now
                // the iPad's is decided, and it got none.
                let state = try #require(try await server.wakeState(of: padDevice, account: account.id))
                #expect(state.pulledVersion >= version)
                #expect(state.dueAt == nil)
                #expect(state.wakeCount == 0)
                #expect(state.lastWakeAt == nil)
                #expect(await pad.shortcuts().map(\.identifier).contains("tomato"))
                #expect(standIn.received.count == 1)
            }
        }
    }

    /// The app's side, through the client library: it registers the token APNs gave it (bytes),
    /// and its background handler pulls and says whether the view changed.
    @Test func theClientLibraryRegistersItsTokenAndItsBackgroundHandlerPulls() async throws {
        try await TestServer.withWakes { server, standIn in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let padDevice = try await server.createDevice(accountToken: account.token, name: "iPad", platform: .iPadOS)
            let storage = NSTemporaryDirectory() + "shortcut-sync-wake-\(UUID().uuidString).sqlite"
            defer { try? FileManager.default.removeItem(atPath: storage) }
            let pad = try ClientLibraryTests.client(server, token: padDevice.token, storage: storage)
            let bytes = Data((0..<32).map { UInt8($0 * 7 % 256) })
            try await pad.registerPushToken(bytes, topic: "com.example.soup", environment: .development)
            let state = try #require(try await server.wakeState(of: padDevice, account: account.id))
            #expect(state.registration.token == bytes.map { String(format: "%02x", $0) }.joined())
            #expect(state.registration.environment == "development")
            // A topic that is not a bundle id is refused by the service, and the library says so.
            await #expect(throws: SyncTransportError.self) {
                try await pad.registerPushToken(bytes, topic: "not a bundle id", environment: .production)
            }

            let home = Household(account: account, phone: phone, pad: padDevice, padToken: state.registration.token)
            try await Self.change(home, "pumpkin")
            _ = try await standIn.waitForRequests(1, within: .seconds(20))
            #expect(try await pad.handleBackgroundNotification(), "the wake brings the pumpkin")
            #expect(await pad.shortcuts().map(\.identifier) == ["pumpkin"])
            #expect(try await pad.handleBackgroundNotification() == false, "nothing new since")
            try await pad.unregisterPushToken()
            #expect(try await server.wakeState(of: padDevice, account: account.id) == nil)
        }
    }

    /// Two servers on one database, each with its waker: every sleeping device gets one wake.
    @Test func twoServersWakeEachDeviceOnce() async throws {
        try await APNsStandIn.withStandIn { standIn in
            try await TestDatabase.withClient(maximumConnections: 4) { sql, url in
                try await TestServer.with(database: url, sql: sql, configure: TestServer.wakes(standIn)) { first in
                    try await TestServer.with(database: url, sql: sql, configure: TestServer.wakes(standIn)) { second in
                        var tokens: Set<String> = []
                        var homes: [Household] = []
                        for index in 0..<12 {
                            let home = try await Self.household(index % 2 == 0 ? first : second)
                            tokens.insert(home.padToken)
                            homes.append(home)
                        }
                        // Half the changes through each server (each household's phone is of the server that made it).
                        for home in homes { try await Self.change(home) }
                        let received = try await standIn.waitForRequests(tokens.count, within: .seconds(30))
                        #expect(Set(received.map(\.deviceToken)) == tokens)
                        try await eventually("every wake is counted") {
                            try await sql.query("SELECT count(*) FROM push_tokens WHERE wake_count = 1 AND due_at IS NULL")
                                .decode(Int64.self).collectAll() == [Int64(tokens.count)]
                        }
                        #expect(standIn.received.count == tokens.count, "each device woken once, by one of the two servers")
                    }
                }
            }
        }
    }

    /// A change made while no waker listened (its notification lost) is found when one starts.
    @Test func aChangeNoWakerHeardIsFoundWhenOneStarts() async throws {
        try await APNsStandIn.withStandIn { standIn in
            try await TestDatabase.withClient(maximumConnections: 4) { sql, url in
                var home: Household?
                try await TestServer.with(database: url, sql: sql, configure: { $0.runsWaker = false }) { quiet in
                    home = try await Self.household(quiet)
                    try await Self.change(home!)
                }
                #expect(standIn.received.isEmpty)
                try await TestServer.with(database: url, sql: sql, configure: TestServer.wakes(standIn)) { _ in
                    let received = try await standIn.waitForRequests(1, within: .seconds(20))
                    #expect(received.map(\.deviceToken) == [home?.padToken])
                }
            }
        }
    }

    /// `shortcut-sync worker` with the APNs options (files, as an operator gives them) wakes
    /// devices too: a server without a waker takes the change, the worker process wakes.
    @Test func theWorkerCommandWakesWithTheKeyFileAndTheStandInsCertificate() async throws {
        try await APNsStandIn.withStandIn { standIn in
            try await TestDatabase.withClient(maximumConnections: 4) { sql, url in
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shortcut-sync-apns-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: directory) }
                let keyFile = directory.appendingPathComponent("AuthKey.p8"), authority = directory.appendingPathComponent("ca.pem")
                try Data(standIn.key.privateKeyPEM.utf8).write(to: keyFile)
                try Data(standIn.authorityPEM.utf8).write(to: authority)
                let worker = try await CommandProcess(["worker", "--database-url", url.urlString, "--wake-delay", "0.2",
                                                       "--apns-key-file", keyFile.path, "--apns-key-id", standIn.key.keyID,
                                                       "--apns-team-id", standIn.key.teamID, "--apns-topic", "com.example.shortcuts",
                                                       "--apns-url", standIn.url.absoluteString, "--apns-ca-file", authority.path])
                defer { worker.forceStop() }
                try await TestServer.with(database: url, sql: sql, configure: { $0.runsWaker = false }) { server in
                    let home = try await Self.household(server)
                    try await Self.change(home)
                    let received = try await standIn.waitForRequests(1, within: .seconds(30))
                    #expect(received.map(\.deviceToken) == [home.padToken])
                    #expect(received.first?.status == 200)
                }
                worker.send(SIGTERM)
                #expect(try await worker.waitForExit(timeout: .seconds(15)), "the worker stops on SIGTERM")
            }
        }
    }

    /// APNs out of reach: pushes and pulls go on as ever, and the wake waits for a retry.
    @Test func pushesGoOnWhileApnsCannotBeReached() async throws {
        try await APNsStandIn.withStandIn { standIn in
            let unreachable = URL(string: "https://127.0.0.1:1")!
            try await TestServer.with(configure: {
                TestServer.wakes(standIn)(&$0)
                $0.apns?.url = unreachable
            }) { server in
                let home = try await Self.household(server)
                for index in 0..<20 { try await Self.change(home, "soup-\(index)") }
                try await eventually("the wake waits for a retry") {
                    try await server.wakeState(of: home.pad, account: home.account.id)?.failures ?? 0 >= 1
                }
                try await home.pad.pull()
                #expect(home.pad.view.shortcuts.count == 20)
                #expect(standIn.received.isEmpty)
                let ready = try await server.operators("/readyz")
                #expect(ready.status == 200 && ready.json["wakes"] as? String == "configured")
            }
        }
    }

    static func metrics(_ server: TestServer) async throws -> String {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: server.operatorURL.absoluteString + "/metrics"), timeout: .seconds(10))
        return String(buffer: try await response.body.collect(upTo: 1 << 22))
    }

    /// The value of an unlabelled counter in Prometheus text.
    static func counter(_ name: String, in text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.split(separator: " ").last ?? "")
        }
        return nil
    }
}

import APNsStandIn
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import OpenAPIAsyncHTTPClient
import PostgresNIO
import ShortcutSyncAPI
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

/// What the waker does with each answer of APNs (DESIGN §6), end to end through the stand-in:
/// `410` drops the token unless it was registered since, `400` drops it, `429` and `5xx` are
/// retried, `403` is shown by `/readyz`; and what `/metrics` and `/readyz` say of wakes.
/// One test at a time: each runs a service, a stand-in and a waker, and together they would
/// load the machine that the other suites' timed expectations share.
@Suite(.serialized) struct WakeAnswerTests {
    typealias Household = WakeTests.Household

    static func household(_ server: TestServer) async throws -> Household { try await WakeTests.household(server) }

    @discardableResult
    static func change(_ household: Household, _ identifier: String = UUID().uuidString) async throws -> Int64 {
        try await WakeTests.change(household, identifier)
    }

    @Test func unregisteredDropsTheTokenUnlessItWasRegisteredAgainSince() async throws {
        try await TestServer.withWakes(interval: .seconds(1)) { server, standIn in
            let home = try await Self.household(server)
            // APNs last knew the token valid an hour before it was registered: the device
            // registered again since, the token stays.
            let registered = try #require(try await server.wakeState(of: home.pad, account: home.account.id)?.registeredAt)
            standIn.answerNext(.unregistered(since: registered - 3600))
            try await Self.change(home)
            _ = try await standIn.waitForRequests(1, within: .seconds(20))
            try await eventually("the first 410 is decided") {
                try await server.wakeState(of: home.pad, account: home.account.id)?.dueAt == nil
            }
            #expect(try await server.wakeState(of: home.pad, account: home.account.id) != nil, "kept: registered after APNs' timestamp")
            // Now APNs says it stopped being valid after the registration: dropped.
            standIn.answerNext(.unregistered(since: Date()))
            try await Self.change(home)
            _ = try await standIn.waitForRequests(2, within: .seconds(20))
            try await eventually("the token is dropped") {
                try await server.wakeState(of: home.pad, account: home.account.id) == nil
            }
            #expect(standIn.received.map(\.status) == [410, 410])
        }
    }

    @Test(arguments: [StandInAnswer.badDeviceToken, .deviceTokenNotForTopic])
    func aTokenApnsRefusesIsDropped(_ refusal: StandInAnswer) async throws {
        try await TestServer.withWakes { server, standIn in
            let home = try await Self.household(server)
            standIn.answerNext(refusal)
            try await Self.change(home)
            _ = try await standIn.waitForRequests(1, within: .seconds(20))
            try await eventually("the token is dropped") {
                try await server.wakeState(of: home.pad, account: home.account.id) == nil
            }
            #expect(standIn.received.map(\.status) == [400])
            // Counted (the counters are the process's: other tests' wakes count too; the count
            // follows the row's deletion by a moment).
            try await eventually("/metrics counts the refusal and the token dropped") {
                let text = try await Self.metrics(server)
                return text.contains(#"shortcut_sync_wakes_refused_total{kind="bad_token"}"#)
                    && Self.counter("shortcut_sync_push_tokens_dropped_total", in: text) ?? 0 >= 1
            }
        }
    }

    /// A token for an app the service does not wake (registered before `--apns-topic` said which,
    /// or through a server that took any) is dropped, and nothing is sent to APNs for it.
    @Test func aTokenForATopicNotConfiguredIsDroppedUnsent() async throws {
        try await TestServer.withWakes { server, standIn in
            let home = try await Self.household(server)
            try await server.sql.query("UPDATE push_tokens SET topic = 'com.example.elsewhere' WHERE account_id = \(home.account.id)")
            try await Self.change(home)
            try await eventually("the token is dropped") {
                try await server.wakeState(of: home.pad, account: home.account.id) == nil
            }
            #expect(standIn.received.isEmpty, "nothing was sent for it")
        }
    }

    @Test(arguments: [StandInAnswer.tooManyRequests, .internalServerError])
    func aWakeApnsCannotTakeNowIsRetriedWithBackoff(_ refusal: StandInAnswer) async throws {
        try await TestServer.withWakes { server, standIn in
            let home = try await Self.household(server)
            standIn.answerNext(refusal, refusal)
            let version = try await Self.change(home)
            let received = try await standIn.waitForRequests(3, within: .seconds(20))
            #expect(received.map(\.status).prefix(3) == [refusal == .tooManyRequests ? 429 : 500, refusal == .tooManyRequests ? 429 : 500, 200])
            try await eventually("the wake is counted once") {
                try await server.wakeState(of: home.pad, account: home.account.id)?.wakeCount == 1
            }
            let state = try #require(try await server.wakeState(of: home.pad, account: home.account.id))
            #expect(state.failures == 0)
            #expect(state.wokenVersion == version)
            #expect(standIn.received.count == 3, "one wake, delivered once")
        }
    }

    @Test func aRefusedKeyIsShownByReadyzUntilApnsAcceptsIt() async throws {
        try await TestServer.withWakes { server, standIn in
            let ready = try await server.operators("/readyz")
            #expect(ready.json["wakes"] as? String == "configured")
            let home = try await Self.household(server)
            standIn.answerNext(.invalidProviderToken)
            try await Self.change(home)
            _ = try await standIn.waitForRequests(1, within: .seconds(20))
            // Seen while it lasts (the wake is retried 100 ms later, and then accepted).
            let seen = Mutex<(status: Int, detail: String)?>(nil)
            try await eventually("/readyz says the key was refused") {
                let answer = try await server.operators("/readyz")
                guard answer.json["wakes"] as? String == "keyRefused" else { return false }
                seen.withLock { $0 = (answer.status, answer.json["detail"] as? String ?? "") }
                return true
            }
            let refused = try #require(seen.withLock { $0 })
            #expect(refused.status == 200, "wakes never make the service unready")
            #expect(refused.detail.contains("APNs refused the provider token"))
            // The wake is retried, APNs takes it, and the key is accepted.
            _ = try await standIn.waitForRequests(2, within: .seconds(20))
            try await eventually("/readyz says the key is accepted") {
                try await server.operators("/readyz").json["wakes"] as? String == "accepted"
            }
        }
    }

    @Test func withoutAKeyNoWakeIsSentAndReadyzSaysSo() async throws {
        try await TestServer.with { server in
            let ready = try await server.operators("/readyz")
            #expect(ready.status == 200)
            #expect(ready.json["wakes"] as? String == "off")
        }
    }

    @Test func wakesAreCountedInMetrics() async throws {
        try await TestServer.withWakes { server, standIn in
            let home = try await Self.household(server)
            try await Self.change(home)
            _ = try await standIn.waitForRequests(1, within: .seconds(20))
            try await eventually("/metrics counts the wake") {
                let text = try await Self.metrics(server)
                return Self.counter("shortcut_sync_wakes_sent_total", in: text) ?? 0 >= 1
            }
            let text = try await Self.metrics(server)
            #expect(Self.counter("shortcut_sync_push_tokens_dropped_total", in: text) != nil)
        }
    }

    static func metrics(_ server: TestServer) async throws -> String { try await WakeTests.metrics(server) }

    static func counter(_ name: String, in text: String) -> Double? { WakeTests.counter(name, in: text) }
}

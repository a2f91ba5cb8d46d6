import APNsStandIn
import Foundation
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncWake
import Synchronization
import Testing

/// The APNs client against the local stand-in: the request Apple expects, each answer Apple
/// gives as the waker reads it, and the provider token reused and renewed as Apple requires.
@Suite struct APNsClientTests {
    static let token = String(repeating: "ab", count: 32)

    static func wake(token: String = token, topic: String = "com.example.shortcuts") -> DueWake {
        DueWake(account: UUID(), device: UUID(),
                registration: PushTokenRegistration(token: token, topic: topic, environment: "production"),
                registeredAt: Date(), version: 1)
    }

    /// A client of the stand-in, signing with `key` (the stand-in's own by default), shut down after `body`.
    static func withClient<Result>(
        of standIn: APNsStandIn, key: StandInKey? = nil,
        _ body: (APNsClient) async throws -> Result
    ) async throws -> Result {
        let key = key ?? standIn.key
        let client = try await APNsClient(configuration: APNsConfiguration(
            keyPEM: key.privateKeyPEM, keyID: key.keyID, teamID: key.teamID,
            topics: ["com.example.shortcuts"], url: standIn.url, additionalTrustRootsPEM: standIn.authorityPEM))
        do {
            let result = try await body(client)
            try await client.shutdown()
            return result
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    @Test func aWakeIsWhatAppleExpectsAndIsAccepted() async throws {
        try await APNsStandIn.withStandIn { standIn in
            let wake = Self.wake()
            let answer = try await Self.withClient(of: standIn) { await $0.send(wake, logger: TestDatabase.shared.logger) }
            #expect(answer == .delivered)
            let received = try #require(standIn.received.first)
            #expect(received.status == 200)
            #expect(received.overHTTP2)
            #expect(received.deviceToken == Self.token)
            #expect(received.headers["apns-push-type"] == "background")
            #expect(received.headers["apns-priority"] == "5")
            #expect(received.headers["apns-topic"] == "com.example.shortcuts")
            #expect(received.headers["apns-collapse-id"] == wake.account.uuidString.lowercased())
            #expect(received.body == #"{"aps":{"content-available":1}}"#)
        }
    }

    @Test func eachAnswerOfApnsIsReadAsTheWakerActsOnIt() async throws {
        try await APNsStandIn.withStandIn { standIn in
            let since = Date(timeIntervalSince1970: 1_763_712_000)
            standIn.answerNext(.unregistered(since: since), .badDeviceToken, .deviceTokenNotForTopic,
                               .tooManyRequests, .internalServerError, .invalidProviderToken)
            let answers = try await Self.withClient(of: standIn) { client in
                var answers: [APNsAnswer] = []
                for _ in 0..<7 { answers.append(await client.send(Self.wake(), logger: TestDatabase.shared.logger)) }
                return answers
            }
            #expect(answers == [
                .unregistered(since: since), .badToken(reason: "BadDeviceToken"), .badToken(reason: "DeviceTokenNotForTopic"),
                .retryLater(status: 429, reason: "TooManyRequests"), .retryLater(status: 500, reason: "InternalServerError"),
                .keyRefused(reason: "InvalidProviderToken"), .delivered,
            ])
        }
    }

    @Test func anotherTeamsKeyIsRefusedWith403() async throws {
        try await APNsStandIn.withStandIn { standIn in
            let impostor = StandInKey(keyID: standIn.key.keyID, teamID: standIn.key.teamID)
            let answer = try await Self.withClient(of: standIn, key: impostor) { await $0.send(Self.wake(), logger: TestDatabase.shared.logger) }
            #expect(answer == .keyRefused(reason: "InvalidProviderToken"))
            let wrongKeyID = StandInKey(keyID: "OTHERKEY01", teamID: standIn.key.teamID)
            let other = try await Self.withClient(of: standIn, key: wrongKeyID) { await $0.send(Self.wake(), logger: TestDatabase.shared.logger) }
            #expect(other == .keyRefused(reason: "InvalidProviderToken"))
        }
    }

    @Test func oneProviderTokenServesManyWakes() async throws {
        try await APNsStandIn.withStandIn { standIn in
            let answers = try await Self.withClient(of: standIn) { client in
                await withTaskGroup(of: APNsAnswer.self) { group in
                    for _ in 0..<10 { group.addTask { await client.send(Self.wake(), logger: TestDatabase.shared.logger) } }
                    return await group.reduce(into: []) { $0.append($1) }
                }
            }
            #expect(answers == Array(repeating: .delivered, count: 10))
            // A new token per request would be refused by Apple (TooManyProviderTokenUpdates).
            #expect(standIn.providerTokenCount == 1)
        }
    }

    @Test func theProviderTokenIsRenewedAfterItsLifetimeAndNeverWithin20Minutes() async throws {
        let key = StandInKey()
        let clock = TestClock()
        let tokens = try await ProviderToken(keyPEM: key.privateKeyPEM, keyID: key.keyID, teamID: key.teamID,
                                             lifetime: .seconds(50 * 60), now: { clock.now })
        let first = try await tokens.token()
        clock.advance(by: 19 * 60)
        #expect(try await tokens.token() == first)
        // An expired answer within 20 minutes does not make a new token: Apple would refuse it.
        #expect(await tokens.expire() == false)
        clock.advance(by: 30 * 60)
        #expect(try await tokens.token() == first, "49 minutes old: still the same")
        clock.advance(by: 2 * 60)
        let second = try await tokens.token()
        #expect(second != first, "51 minutes old: renewed before Apple's hour")
        // A lifetime asked below Apple's 20 minutes is raised to them.
        let eager = try await ProviderToken(keyPEM: key.privateKeyPEM, keyID: key.keyID, teamID: key.teamID,
                                            lifetime: .seconds(60), now: { clock.now })
        let eagerFirst = try await eager.token()
        clock.advance(by: 5 * 60)
        #expect(try await eager.token() == eagerFirst)
    }

    /// The wakes of one batch ask for the token at once: one is signed, all of them get it.
    @Test func manyAskingAtOnceGetOneToken() async throws {
        let key = StandInKey()
        for _ in 0..<20 {
            let tokens = try await ProviderToken(keyPEM: key.privateKeyPEM, keyID: key.keyID, teamID: key.teamID)
            let got = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<16 { group.addTask { try await tokens.token() } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(got.count == 1)
        }
    }

    @Test func aKeyThatIsNotAP256KeyIsRefusedAtStart() async throws {
        await #expect(throws: (any Error).self) {
            _ = try await ProviderToken(keyPEM: "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n",
                                        keyID: "KEY", teamID: "TEAM")
        }
    }
}

/// A clock a test moves by hand.
final class TestClock: Sendable {
    private let start = Date()
    private let offset = Mutex<TimeInterval>(0)

    var now: Date { start + offset.withLock { $0 } }

    func advance(by seconds: TimeInterval) {
        offset.withLock { $0 += seconds }
    }
}

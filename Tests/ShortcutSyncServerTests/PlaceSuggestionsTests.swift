import Foundation
import NIOHTTP1
import PostgresNIO
import ShortcutSyncAPI
import ShortcutSyncClient
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import Testing

/// Where as well as when (issue 67), against the real service and PostgreSQL: donations carry
/// place tokens the client library makes under the person's key, `GET /v1/suggestions` takes
/// the device's tokens and ranks by time and place, somewhere new is ranked by time alone,
/// habits show places as token prefixes, and what the pushes folded is what the log gives.
@Suite struct PlaceSuggestionsTests {
    static let key = PlaceKey(bytes: (0..<32).map { UInt8($0 * 7 % 256) })!
    static let office = PlaceCoordinate(latitude: 52.5200, longitude: 13.4050)
    static let gym = PlaceCoordinate(latitude: 52.5310, longitude: 13.3840)
    static let beach = PlaceCoordinate(latitude: 54.0900, longitude: 12.1400)

    static func donation(_ identifier: String, bundle: String, at place: PlaceCoordinate?) -> EventBody {
        .donation(Donation(bundleId: bundle, identifier: identifier, kind: .intent, intentType: "I", title: identifier.capitalized,
                           utcOffsetMinutes: 0, place: place.flatMap { key.token(at: $0) }))
    }

    /// Four weeks of weekday noons: soup at the office, the playlist at the gym, as many of each.
    static func plant(on phone: SimulatedDevice) async throws {
        for week in 0..<4 {
            for weekday in 0..<5 {
                let noon = SuggestionsTests.start + Int64(week) * SuggestionsTests.week + Int64(weekday) * SuggestionsTests.day + 12 * SuggestionsTests.hour
                phone.record(donation("soup", bundle: "com.example.soup", at: office), at: noon)
                phone.record(donation("gym", bundle: "com.example.music", at: gym), at: noon + 60_000)
            }
        }
        try await phone.push()
    }

    /// The fifth Monday, 12:20 UTC.
    static let nextNoon = SuggestionsTests.start + 4 * SuggestionsTests.week + 12 * SuggestionsTests.hour + 20 * 60_000

    static func suggestions(_ server: TestServer, _ device: SimulatedDevice, at place: PlaceCoordinate?) async throws -> [[String: Any]] {
        let tokens = place.map { key.tokens(around: $0) } ?? []
        let query = tokens.map { "&place=\($0)" }.joined()
        let answer = try await server.raw(.GET, "/v1/suggestions?at=\(nextNoon)&limit=4&utcOffsetMinutes=0\(query)", token: device.token)
        #expect(answer.status == 200, "\(answer.json)")
        return answer.json["suggestions"] as? [[String: Any]] ?? []
    }

    @Test func thePlaceDecidesWhatIsOfferedAtTheSameHour() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token, name: "iPhone", platform: .iOS)
            let watch = try await server.createDevice(accountToken: account.token, name: "Watch", platform: .watchOS)
            try await Self.plant(on: phone)

            let atOffice = try await Self.suggestions(server, phone, at: Self.office)
            let atGym = try await Self.suggestions(server, watch, at: Self.gym)
            #expect(atOffice.map { $0["identifier"] as? String } == ["soup", "gym"])
            #expect(atOffice.first?["reason"] as? String == "often here on weekday afternoons on this iPhone")
            #expect(atGym.first?["identifier"] as? String == "gym", "the watch was never there: the person's places are every device's")

            // Somewhere new, and with no place at all: by time alone, the same answer.
            let nowhere = try await Self.suggestions(server, phone, at: nil)
            let atTheBeach = try await Self.suggestions(server, phone, at: Self.beach)
            #expect(nowhere.count == 2)
            #expect(atTheBeach.map { $0["identifier"] as? String } == nowhere.map { $0["identifier"] as? String })
            #expect(atTheBeach.map { $0["score"] as? Double } == nowhere.map { $0["score"] as? Double })

            // Habits show the places as the prefixes of their tokens, nothing more.
            let habits = try await server.raw(.GET, "/v1/suggestions/habits?bundleId=com.example.soup&identifier=soup", token: phone.token)
            let places = try #require(habits.json["places"] as? [[String: Any]])
            let officePrefix = String(try #require(Self.key.token(at: Self.office)).prefix(2))
            #expect(places.map { $0["prefix"] as? String } == [officePrefix])

            // What the pushes folded is what a fold of the log gives, places and all.
            let verification = try await ProjectionStore(client: server.sql, logger: TestDatabase.shared.logger).rebuilder.verify()
            #expect(verification.differences == [])
        }
    }

    /// A person forgets the gym (issue 67): its playlist is no longer offered there for the
    /// place, it is still offered at noon, the office is still known, and the log gives the same.
    @Test func aForgottenPlaceIsForgottenWhereNotWhen() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token, name: "iPhone", platform: .iOS)
            let watch = try await server.createDevice(accountToken: account.token, name: "Watch", platform: .watchOS)
            try await Self.plant(on: phone)
            let nowhere = try await Self.suggestions(server, phone, at: nil)
            let gymToken = try #require(Self.key.token(at: Self.gym))
            let gymSlot = try #require(PlaceToken.slot(of: gymToken))

            watch.record(.learningForgotten(LearningForgotten(scope: .place(gymSlot))), at: Self.nextNoon - SuggestionsTests.hour)
            try await watch.push()
            let habits = try await server.raw(.GET, "/v1/suggestions/habits?bundleId=com.example.music&identifier=gym", token: phone.token)
            #expect(habits.json["places"] as? [[String: Any]] == nil || (habits.json["places"] as? [[String: Any]])?.isEmpty == true,
                    "\(habits.json)")
            #expect((habits.json["devices"] as? [[String: Any]])?.first?["donations"] as? Int == 20, "its hours are kept")
            // At the gym now: nothing was used there that is remembered, so by time alone.
            let atGym = try await Self.suggestions(server, phone, at: Self.gym)
            #expect(atGym.map { $0["identifier"] as? String } == nowhere.map { $0["identifier"] as? String })
            #expect(atGym.map { $0["score"] as? Double } == nowhere.map { $0["score"] as? Double })
            let atOffice = try await Self.suggestions(server, phone, at: Self.office)
            #expect(atOffice.first?["identifier"] as? String == "soup")
            #expect(atOffice.first?["reason"] as? String == "often here on weekday afternoons on this iPhone")

            let verification = try await ProjectionStore(client: server.sql, logger: TestDatabase.shared.logger).rebuilder.verify()
            #expect(verification.differences == [])
        }
    }

    @Test func aBadPlaceIsRefusedAndChangesNothing() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let tooMany = (0...PlaceToken.maxPerRequest).map { _ in "&place=" + String(repeating: "0", count: 32) }.joined()
            let good = String(repeating: "0", count: 32)
            for (query, pointers) in [("place=XYZ", ["/place/0"]), ("place=\(good)&place=\(String(repeating: "A", count: 32))", ["/place/1"]),
                                      (String(tooMany.dropFirst()), ["/place"])] {
                let answer = try await server.raw(.GET, "/v1/suggestions?\(query)", token: phone.token)
                #expect(answer.status == 422, "\(query): \(answer.json)")
                #expect(answer.json.pointers == pointers, "\(query)")
            }
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let body = #"{"events":[{"id":"\#(UUID())","seq":1,"hlc":{"wallMillis":\#(now),"counter":0},"type":"donation","bundleId":"com.example.soup","identifier":"soup","kind":"intent","intentType":"I","title":"Soup","place":"52.52,13.40"}]}"#
            let push = try await server.raw(.POST, "/v1/sync/push", token: phone.token, body: Array(body.utf8))
            #expect(push.status == 422, "\(push.json)")
            #expect(push.json.pointers == ["/events/0/place"])
            let stored = try await server.sql.query("SELECT count(*) FROM events WHERE account_id = \(account.id)", logger: TestDatabase.shared.logger)
                .decode(Int64.self).collectAll()
            #expect(stored == [0])
        }
    }
}

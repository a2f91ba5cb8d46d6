import Foundation
import NIOHTTP1
import OpenAPIAsyncHTTPClient
import PostgresNIO
import ShortcutSyncAPI
import ShortcutSyncClient
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import Synchronization
import Testing

/// The client library's place key (issue 67): tokens equal on every device holding the key and
/// different under any other, cells a few hundred metres wide, neighbours that cover a cell's
/// edge and the antimeridian, and the library sending only tokens.
@Suite struct PlaceKeyTests {
    static let key = PlaceKey(bytes: [UInt8](repeating: 1, count: 32))!
    static let other = PlaceKey(bytes: [UInt8](repeating: 2, count: 32))!

    @Test func tokensAreTheKeysAndOnlyItsOwn() throws {
        let bank = PlaceCoordinate(latitude: 48.8566, longitude: 2.3522)
        let token = try #require(Self.key.token(at: bank))
        #expect(PlaceToken.isValid(token))
        #expect(PlaceKey(bytes: Self.key.bytes)?.token(at: bank) == token, "another device with the same key")
        #expect(Self.other.token(at: bank) != token)
        #expect(PlaceKey(bytes: [UInt8](repeating: 1, count: 31)) == nil)
        #expect(PlaceKey.generate() != PlaceKey.generate())
    }

    @Test func aCellIsAFewHundredMetresWide() throws {
        for latitude in [0.0, 45.0, 60.0, 78.0] {
            let here = PlaceCoordinate(latitude: latitude + 0.00001, longitude: 10.00001)
            let token = try #require(Self.key.token(at: here))
            // Two kilometres north or east is another cell, at every latitude.
            #expect(Self.key.token(at: PlaceCoordinate(latitude: here.latitude + 0.018, longitude: here.longitude)) != token)
            let eastDegrees = 0.018 / cos(latitude * .pi / 180)
            #expect(Self.key.token(at: PlaceCoordinate(latitude: here.latitude, longitude: here.longitude + eastDegrees)) != token)
            // Its cell and the eight around it, all different, its own first.
            let around = Self.key.tokens(around: here)
            #expect(around.count == 9 && Set(around).count == 9 && around.first == token, "\(latitude)")
        }
    }

    /// Wherever a donation was made within a cell of where the device is now, one of the request's
    /// tokens is the donation's: across a row's edge, a column's, and the antimeridian.
    @Test func theNeighboursCoverACellsEdge() throws {
        let pairs: [(PlaceCoordinate, PlaceCoordinate)] = [
            (PlaceCoordinate(latitude: 51.50001, longitude: -0.1), PlaceCoordinate(latitude: 51.49999, longitude: -0.1)),
            (PlaceCoordinate(latitude: 51.5, longitude: 179.99999), PlaceCoordinate(latitude: 51.5, longitude: -179.99999)),
            (PlaceCoordinate(latitude: -33.86, longitude: 151.2093), PlaceCoordinate(latitude: -33.8612, longitude: 151.2105)),
        ]
        for (donatedAt, standingAt) in pairs {
            let donated = try #require(Self.key.token(at: donatedAt))
            #expect(Self.key.tokens(around: standingAt).contains(donated), "\(donatedAt) from \(standingAt)")
        }
        #expect(Self.key.token(at: PlaceCoordinate(latitude: 12, longitude: 190)) == Self.key.token(at: PlaceCoordinate(latitude: 12, longitude: -170)))
        #expect(Self.key.tokens(around: PlaceCoordinate(latitude: 89.9999, longitude: 0)).count >= 1)
    }

    @Test func whatIsNotACoordinateMakesNoToken() {
        for bad in [PlaceCoordinate(latitude: .nan, longitude: 0), PlaceCoordinate(latitude: 91, longitude: 0),
                    PlaceCoordinate(latitude: 0, longitude: .infinity)] {
            #expect(Self.key.token(at: bad) == nil)
            #expect(Self.key.tokens(around: bad).isEmpty)
        }
    }

    /// The library puts its cell's token on each donation and the tokens around the device on
    /// its suggestions request, and nothing else of the place: the stored event holds the token.
    @Test func theLibraryDonatesAndAsksWithTokensOnly() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token, name: "iPhone", platform: .iOS)
            let storage = ClientLibraryTests.storage()
            defer { try? FileManager.default.removeItem(atPath: storage) }
            let office = PlaceCoordinate(latitude: 40.7128, longitude: -74.0060)
            let clock = Mutex<Int64>(SuggestionsClientTests.start)
            var configuration = ShortcutSyncClient.Configuration(bundleId: "com.example.soup", storagePath: storage)
            configuration.now = { clock.withLock { $0 } }
            configuration.utcOffsetMinutes = { _ in 0 }
            configuration.placeKey = Self.key
            configuration.location = { office }
            let client = try ShortcutSyncClient(
                configuration: configuration,
                transport: OpenAPISyncTransport(serverURL: server.baseURL, deviceToken: phone.token, transport: AsyncHTTPClientTransport()),
                logger: TestDatabase.shared.logger)
            // Soup at the office, leek soup at home (given with the donation), every weekday noon for two weeks.
            let home = PlaceCoordinate(latitude: 40.7306, longitude: -73.9352)
            for day in [0, 1, 2, 3, 4, 7, 8, 9, 10, 11] {
                let millis: Int64 = SuggestionsClientTests.start + Int64(day) * 24 * SuggestionsClientTests.hour + 12 * SuggestionsClientTests.hour
                clock.withLock { $0 = millis }
                try await client.donate(IntentDonation(intentType: "OrderSoupIntent", identifier: "tomato", title: "Tomato soup"))
                try await client.donate(IntentDonation(intentType: "OrderSoupIntent", identifier: "leek", title: "Leek soup", location: home))
            }
            try await client.sync()
            let places = try await server.sql.query("""
                SELECT body->>'identifier', body->>'place' FROM events WHERE device_id = \(phone.id) AND type = 'donation' GROUP BY 1, 2 ORDER BY 1
                """).decode((String, String?).self).collectAll()
            #expect(places.map(\.0) == ["leek", "tomato"])
            #expect(places.map(\.1) == [Self.key.token(at: home), Self.key.token(at: office)])

            let hour: Int64 = SuggestionsClientTests.hour
            let noonMillis: Int64 = SuggestionsClientTests.start + 14 * 24 * hour + 12 * hour + 600_000
            let noon = Date(timeIntervalSince1970: Double(noonMillis) / 1000)
            let atOffice = try #require(try await client.suggestions(at: noon, limit: 2))
            #expect(atOffice.suggestions.map(\.identifier) == ["tomato", "leek"])

            // Forgetting the office names it by its token's slot, nothing more; the habits forget it.
            try await client.forgetPlace(at: office)
            try await client.sync()
            let forget = try await server.sql.query("""
                SELECT body::text FROM events WHERE device_id = \(phone.id) AND type = 'learningForgotten'
                """).decode(String.self).collectAll()
            let officeToken = try #require(Self.key.token(at: office)), homeToken = try #require(Self.key.token(at: home))
            let officePrefix = String(officeToken.prefix(2))
            #expect(forget.map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String] } == [["scope": "place", "place": officePrefix]])
            let tomato = try await server.raw(.GET, "/v1/suggestions/habits?bundleId=com.example.soup&identifier=tomato", token: phone.token)
            #expect((tomato.json["places"] as? [[String: Any]] ?? []).isEmpty, "\(tomato.json)")
            let leek = try await server.raw(.GET, "/v1/suggestions/habits?bundleId=com.example.soup&identifier=leek", token: phone.token)
            #expect((leek.json["places"] as? [[String: Any]])?.map { $0["prefix"] as? String } == [String(homeToken.prefix(2))])

            // A device without the key cannot name a place, and records nothing.
            configuration.placeKey = nil
            configuration.storagePath = ClientLibraryTests.storage()
            defer { try? FileManager.default.removeItem(atPath: configuration.storagePath) }
            let keyless = try ShortcutSyncClient(
                configuration: configuration,
                transport: OpenAPISyncTransport(serverURL: server.baseURL, deviceToken: phone.token, transport: AsyncHTTPClientTransport()),
                logger: TestDatabase.shared.logger)
            let pending = try await keyless.pendingCount()
            await #expect(throws: (any Error).self) { try await keyless.forgetPlace(at: office) }
            #expect(try await keyless.pendingCount() == pending)
        }
    }
}

import Foundation
import NIOHTTP1
import OpenAPIAsyncHTTPClient
import ShortcutSyncAPI
import ShortcutSyncClient
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import Testing

/// What the service learned, in the person's hands (issue 34, item 2): `GET /v1/suggestions/habits`
/// and the client library's `habits(of:)` show each hour of the week and each device's share of
/// one shortcut of the device's view, from the same sums the suggestions are ranked by.
@Suite struct HabitsTests {
    static func habits(_ server: TestServer, _ device: SimulatedDevice, _ bundleId: String, _ identifier: String) async throws -> (status: Int, json: [String: Any]) {
        try await server.raw(.GET, "/v1/suggestions/habits?bundleId=\(bundleId)&identifier=\(identifier)", token: device.token)
    }

    static func hours(_ json: Any?) -> [Int: Double] {
        Dictionary(uniqueKeysWithValues: (json as? [[String: Any]] ?? []).compactMap { hour in
            (hour["hourOfWeek"] as? Int).map { ($0, hour["weight"] as? Double ?? 0) }
        })
    }

    @Test func aShortcutsHoursOfTheWeekAndEachDevicesShareAreShown() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token, name: "iPhone", platform: .iOS)
            let mac = try await server.createDevice(accountToken: account.token, name: "Mac", platform: .macOS)
            // Six weeks of the phone: "atm" on Friday evenings, "coffee" every weekday at 8.
            try await SuggestionsTests.plant(on: phone)
            // The Mac orders coffee twice on Saturdays at 10.
            for week in 4..<6 {
                mac.record(SuggestionsTests.donation("coffee", bundle: "com.example.life"),
                           at: SuggestionsTests.start + Int64(week) * SuggestionsTests.week + 5 * SuggestionsTests.day + 10 * SuggestionsTests.hour)
            }
            try await mac.push()

            let atm = try await Self.habits(server, mac, "com.example.bank", "atm")
            #expect(atm.status == 200, "\(atm.json)")
            #expect(atm.json["bundleId"] as? String == "com.example.bank" && atm.json["identifier"] as? String == "atm")
            let friday18 = 4 * 24 + 18
            #expect(Array(Self.hours(atm.json["hours"]).keys) == [friday18], "learned on the Mac too: the account's, every device's")
            let week = try #require(atm.json["week"] as? [[Double]])
            #expect(week.count == 7 && week.allSatisfy { $0.count == 24 })
            #expect(week[4][18] == 1 && week.joined().reduce(0, +) == 1, "Friday 18:00 is all of it")
            let atmDevices = try #require(atm.json["devices"] as? [[String: Any]])
            #expect(atmDevices.count == 1)
            #expect(atmDevices.first?["deviceId"] as? String == phone.id.uuidString.lowercased())
            #expect(atmDevices.first?["name"] as? String == "iPhone" && atmDevices.first?["platform"] as? String == "iOS")
            #expect(atmDevices.first?["donations"] as? Int == 6)

            let coffee = try await Self.habits(server, phone, "com.example.life", "coffee")
            let coffeeHours = Self.hours(coffee.json["hours"])
            #expect(Set(coffeeHours.keys) == Set((0..<5).map { $0 * 24 + 8 } + [5 * 24 + 10]))
            let devices = try #require(coffee.json["devices"] as? [[String: Any]])
            #expect(devices.map { $0["name"] as? String } == ["iPhone", "Mac"], "the heaviest first: 30 donations, then 2")
            #expect(devices.map { $0["donations"] as? Int } == [30, 2])
            #expect(Set(Self.hours(devices.last?["hours"]).keys) == [5 * 24 + 10])
            // Each device's hours add up to the whole.
            let summed = devices.flatMap { Self.hours($0["hours"]).map { ($0.key, $0.value) } }.reduce(into: [Int: Double]()) { $0[$1.0, default: 0] += $1.1 }
            for (hour, weight) in coffeeHours { #expect(abs((summed[hour] ?? 0) - weight) <= weight * 1e-9) }
        }
    }

    @Test func aShortcutOutsideTheDevicesViewIsNotFoundAndNothingLearnedIsEmpty() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let pad = try await server.createDevice(accountToken: account.token, name: "iPad", platform: .iPadOS)
            try await SuggestionsTests.plant(on: phone)
            #expect(try await Self.habits(server, phone, "com.example.bank", "unknown").status == 404)
            // The iPad has only the life app: the bank's shortcut is not in its view.
            pad.record(.appsReported(AppsReported(installed: ["com.example.life"])), at: SuggestionsTests.nextFriday)
            try await pad.push()
            #expect(try await Self.habits(server, pad, "com.example.bank", "atm").status == 404)
            #expect(try await Self.habits(server, pad, "com.example.life", "coffee").status == 200)
            // Deleted: gone from the view, and what it taught with it.
            phone.record(.deletion(Deletion(bundleId: "com.example.bank", selector: .all)), at: SuggestionsTests.nextFriday + 1)
            try await phone.push()
            #expect(try await Self.habits(server, phone, "com.example.bank", "atm").status == 404)
            // A donation not eligible for prediction is in the view and teaches nothing.
            phone.record(.donation(Donation(bundleId: "com.example.life", identifier: "private", kind: .intent, intentType: "I",
                                            title: "Private", eligibleForPrediction: false, utcOffsetMinutes: 0)), at: SuggestionsTests.nextFriday + 2)
            try await phone.push()
            let nothing = try await Self.habits(server, phone, "com.example.life", "private")
            #expect(nothing.status == 200)
            #expect((nothing.json["devices"] as? [Any])?.isEmpty == true && (nothing.json["hours"] as? [Any])?.isEmpty == true)
            #expect((nothing.json["week"] as? [[Double]])?.joined().allSatisfy { $0 == 0 } == true)
        }
    }

    @Test func badInputIsRefusedAndAStrangerSeesNothing() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let long = String(repeating: "a", count: 256)
            let tooLong = try await Self.habits(server, phone, long, "x")
            #expect(tooLong.status == 422 && tooLong.json.pointers == ["/bundleId"], "\(tooLong.json)")
            let nul = try await Self.habits(server, phone, "a.b", "x%00y")
            #expect(nul.status == 422 && nul.json.pointers == ["/identifier"], "\(nul.json)")
            for (bundleId, identifier, pointer) in [("com", "x", "/bundleId"), ("a.b", "%20%20", "/identifier"), ("a..b", "x", "/bundleId")] {
                let refused = try await Self.habits(server, phone, bundleId, identifier)
                #expect(refused.status == 422 && refused.json.pointers == [pointer], "\(bundleId) \(identifier): \(refused.json)")
            }
            let missing = try await server.raw(.GET, "/v1/suggestions/habits?bundleId=com.example.soup", token: phone.token)
            #expect(missing.status == 422, "a required parameter missing, as every operation answers it: \(missing)")
            #expect(try await server.raw(.GET, "/v1/suggestions/habits?bundleId=a.b&identifier=c", token: nil).status == 401)
            #expect(try await server.raw(.GET, "/v1/suggestions/habits?bundleId=a.b&identifier=c", token: account.token).status == 401,
                    "a device's token, not the account's")
        }
    }

    /// The client library asks for it and reads every field.
    @Test func theClientLibraryShowsWhatWasLearned() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token, name: "iPhone", platform: .iOS)
            try await SuggestionsTests.plant(on: phone)
            let storage = ClientLibraryTests.storage()
            defer { try? FileManager.default.removeItem(atPath: storage) }
            let client = try ClientLibraryTests.client(server, token: phone.token, storage: storage)
            try await client.sync()
            let atm = try #require(await client.shortcuts().first { $0.identifier == "atm" })
            let habits = try #require(try await client.habits(of: atm))
            #expect(habits.hours.map(\.hourOfWeek) == [4 * 24 + 18])
            #expect(habits.week[4][18] == 1)
            #expect(habits.devices.map(\.name) == ["iPhone"] && habits.devices.first?.deviceId == phone.id && habits.devices.first?.donations == 6)
            #expect(habits.devices.first.map { $0.weight > 0 && abs($0.weight - habits.hours[0].weight) <= $0.weight * 1e-9 } == true)
        }
    }
}

import Foundation
import NIOHTTP1
import PostgresNIO
import ShortcutSyncAPI
import ShortcutSyncClient
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import Testing

/// Forgetting and pausing what the suggestions learn, through the service (issue 34, item 1):
/// learning events pushed like every other change, folded into the sums on the real
/// PostgreSQL, kept by the log through a rebuild.
@Suite struct LearningTests {
    typealias Plant = SuggestionsTests

    static func habits(_ server: TestServer, _ device: SimulatedDevice, _ bundleId: String, _ identifier: String) async throws -> [[String: Any]] {
        let answer = try await HabitsTests.habits(server, device, bundleId, identifier)
        #expect(answer.status == 200, "\(answer.json)")
        return answer.json["devices"] as? [[String: Any]] ?? []
    }

    static func verify(_ server: TestServer) async throws -> [ProjectionDifference] {
        try await ProjectionStore(client: server.sql, logger: TestDatabase.shared.logger).rebuilder.verify().differences
    }

    @Test func forgettingTheAccountLeavesNothingToSuggestAndARebuildKeepsItForgotten() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token, name: "iPhone", platform: .iOS)
            let mac = try await server.createDevice(accountToken: account.token, name: "Mac", platform: .macOS)
            try await Plant.plant(on: phone)
            #expect(try await Plant.suggestions(server, mac, at: Plant.nextFriday).first?["identifier"] as? String == "atm")
            let before = try await mac.pull()

            mac.record(.learningForgotten(LearningForgotten(scope: .account)), at: Plant.nextFriday - Plant.hour)
            let version = try await mac.push()
            #expect(try await Plant.suggestions(server, mac, at: Plant.nextFriday, limit: 20).isEmpty, "asked right after: nothing is left")
            #expect(try await Plant.suggestions(server, phone, at: Plant.nextFriday, limit: 20).isEmpty)
            #expect(try await Self.habits(server, phone, "com.example.life", "coffee").isEmpty)
            // The views did not change: a pull after it brings nothing.
            let after = try await mac.pull(waitFor: version)
            #expect(after.shortcuts.upserted.isEmpty && after.shortcuts.removed.isEmpty, "no shortcut changed")
            #expect(mac.view.shortcuts.count == 3 && before.shortcuts.upserted.count == 3)

            // The log keeps it forgotten: the rows a fold of the whole log gives are these.
            #expect(try await Self.verify(server) == [])
            // Learning goes on from the forget: a donation after it teaches.
            phone.record(Plant.donation("coffee", bundle: "com.example.life"), at: Plant.nextFriday)
            try await phone.push()
            let coffee = try await Self.habits(server, phone, "com.example.life", "coffee")
            #expect(coffee.map { $0["donations"] as? Int } == [1])
        }
    }

    /// A device that was away forgets one shortcut with its older clock (week 3): only the
    /// donations before that are forgotten, counted again from the log on PostgreSQL.
    @Test func aLateForgetOfOneShortcutForgetsOnlyWhatCameBeforeIt() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token, name: "iPhone", platform: .iOS)
            let watch = try await server.createDevice(accountToken: account.token, name: "Watch", platform: .watchOS)
            try await Plant.plant(on: phone)
            #expect(try await Self.habits(server, phone, "com.example.life", "coffee").first?["donations"] as? Int == 30)
            watch.record(.learningForgotten(LearningForgotten(scope: .shortcut(ShortcutID(bundleId: "com.example.life", identifier: "coffee")))),
                         at: Plant.start + 3 * Plant.week)
            try await watch.push()
            let coffee = try await Self.habits(server, phone, "com.example.life", "coffee")
            #expect(coffee.map { $0["donations"] as? Int } == [15], "weeks 3 to 5: five weekdays each")
            #expect(try await Self.habits(server, phone, "com.example.life", "news").first?["donations"] as? Int == 42, "the other shortcuts keep theirs")
            // A donation the watch made before its forget (week 2) but pushes after it teaches nothing.
            let offline = try await server.createDevice(accountToken: account.token, name: "iPad", platform: .iPadOS)
            offline.record(Plant.donation("coffee", bundle: "com.example.life"), at: Plant.start + 2 * Plant.week)
            try await offline.push()
            #expect(try await Self.habits(server, phone, "com.example.life", "coffee").map { $0["donations"] as? Int } == [15])
            #expect(try await Self.verify(server) == [])
        }
    }

    /// Paused, a device's donations sync (every view has them) and teach nothing; the devices list
    /// shows the pause; resumed, donations teach again.
    @Test func aPausedDeviceSyncsButTeachesNothingUntilResumed() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token, name: "iPhone", platform: .iOS)
            let mac = try await server.createDevice(accountToken: account.token, name: "Mac", platform: .macOS)
            mac.record(.learningPaused(LearningPaused(scope: .device(phone.id), paused: true)), at: Plant.start - Plant.hour)
            try await mac.push()
            let list = try await server.raw(.GET, "/v1/devices", token: account.token)
            #expect(list.json["learning"] as? String == "on")
            let devices = list.json["devices"] as? [[String: Any]] ?? []
            #expect(devices.map { $0["learning"] as? String } == ["paused", "on"], "\(devices)")

            try await Plant.plant(on: phone)
            try await mac.pull()
            #expect(mac.view.shortcuts.count == 3, "the donations synced")
            #expect(try await Plant.suggestions(server, mac, at: Plant.nextFriday, limit: 20).isEmpty, "and taught nothing")

            mac.record(.learningPaused(LearningPaused(scope: .device(phone.id), paused: false)), at: Plant.nextFriday - Plant.hour)
            try await mac.push()
            phone.record(Plant.donation("atm", bundle: "com.example.bank"), at: Plant.nextFriday)
            try await phone.push()
            #expect(try await Self.habits(server, mac, "com.example.bank", "atm").map { $0["donations"] as? Int } == [1])
            let resumed = try await server.raw(.GET, "/v1/devices", token: mac.token)
            #expect((resumed.json["devices"] as? [[String: Any]])?.map { $0["learning"] as? String } == ["on", "on"])

            // A resume that arrives late (made at week 4, pushed now) gives back weeks 4 and 5.
            let late = try await server.createDevice(accountToken: account.token, name: "iPad", platform: .iPadOS)
            late.record(.learningPaused(LearningPaused(scope: .device(phone.id), paused: false)), at: Plant.start + 4 * Plant.week)
            try await late.push()
            #expect(try await Self.habits(server, mac, "com.example.bank", "atm").map { $0["donations"] as? Int } == [3])
            #expect(try await Self.verify(server) == [])
        }
    }

    /// Learning events are checked like every other event: one the rules cannot read is a 422
    /// naming it, and nothing of the push is stored.
    @Test func badLearningEventsAreRefusedAndNothingIsStored() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let bodies = [
                #"{"type":"learningPaused","scope":"shortcut","bundleId":"a.b","identifier":"c","paused":true}"#,
                #"{"type":"learningPaused","scope":"account"}"#,
                #"{"type":"learningForgotten","scope":"device"}"#,
                #"{"type":"learningForgotten","scope":"account","deviceId":"6f1d3e2a-3f4b-4c5d-8e9f-0a1b2c3d4e5f"}"#,
                #"{"type":"learningForgotten","scope":"everything"}"#,
                #"{"type":"learningForgotten","scope":"shortcut","bundleId":"a..b","identifier":"c"}"#,
                #"{"type":"learningPaused","scope":"place","place":"3f","paused":true}"#,
                #"{"type":"learningForgotten","scope":"place"}"#,
                #"{"type":"learningForgotten","scope":"place","place":"3F"}"#,
                #"{"type":"learningForgotten","scope":"place","place":"3fa95c0e8d1b4a7f9e2c6b5d0a1f8e3c"}"#,
                #"{"type":"learningForgotten","scope":"place","place":"3f","deviceId":"6f1d3e2a-3f4b-4c5d-8e9f-0a1b2c3d4e5f"}"#,
                #"{"type":"learningForgotten","scope":"account","place":"3f"}"#,
            ]
            for body in bodies {
                let push = #"{"events":[{"id":"\#(UUID().uuidString)","seq":1,"hlc":{"wallMillis":1,"counter":0},"#
                    + body.dropFirst() + "]}"
                let answer = try await server.raw(.POST, "/v1/sync/push", token: phone.token, body: Array(push.utf8))
                #expect(answer.status == 422, "\(body): \(answer.json)")
                #expect(answer.json.pointers.allSatisfy { $0.hasPrefix("/events/0") }, "\(body): \(answer.json)")
            }
            let stored = try await server.sql.query("SELECT count(*) FROM events WHERE account_id = \(account.id)",
                                                    logger: TestDatabase.shared.logger).decode(Int64.self).collectAll()
            #expect(stored == [0])
        }
    }

    /// Each scope's pauses and resumes are kept for good (a late one must find its place): past
    /// 1,000 of them, a push is refused with 409 and nothing of it is stored.
    @Test func aThousandPausesOfOneScopeIsTheMost() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            for push in 0..<2 {
                for index in 0..<500 {
                    phone.record(.learningPaused(LearningPaused(scope: .account, paused: index % 2 == 0)), at: Plant.start + Int64(push * 500 + index))
                }
                try await phone.push()
            }
            phone.record(.learningPaused(LearningPaused(scope: .device(phone.id), paused: true)), at: Plant.start + 2_000)
            phone.record(.learningPaused(LearningPaused(scope: .account, paused: true)), at: Plant.start + 2_001)
            let body = try JSONEncoder().encode(Components.Schemas.PushRequest(events: phone.outbox))
            let refused = try await server.raw(.POST, "/v1/sync/push", token: phone.token, body: Array(body))
            #expect(refused.status == 409, "\(refused.json)")
            #expect(refused.json["limit"] as? String == "learningChangesPerScope")
            #expect(refused.json.pointers == ["/events/1"], "the account's pause, not the device's")
            let stored = try await server.sql.query("SELECT count(*) FROM events WHERE account_id = \(account.id)",
                                                    logger: TestDatabase.shared.logger).decode(Int64.self).collectAll()
            #expect(stored == [1_000])
        }
    }

    /// The client library records them like any change and shows the pauses.
    @Test func theClientLibraryForgetsPausesAndResumes() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token, name: "iPhone", platform: .iOS)
            try await Plant.plant(on: phone)
            let storage = ClientLibraryTests.storage()
            defer { try? FileManager.default.removeItem(atPath: storage) }
            let client = try ClientLibraryTests.client(server, token: phone.token, storage: storage)
            await #expect(throws: (any Error).self) { try await client.pauseLearning(.shortcut(ShortcutID(bundleId: "a.b", identifier: "c"))) }
            try await client.pauseLearning(.account)
            try await client.sync()
            #expect(try await client.devices().learningPaused)
            try await client.resumeLearning(.account)
            try await client.pauseLearning(.device(phone.id))
            try await client.forgetLearning(.account)
            try await client.sync()
            let devices = try await client.devices()
            #expect(!devices.learningPaused && devices.devices.map(\.learningPaused) == [true])
            #expect(try await Plant.suggestions(server, phone, at: Plant.nextFriday, limit: 20).isEmpty)
            let atm = try #require(await client.shortcuts().first { $0.identifier == "atm" })
            #expect(try await client.habits(of: atm)?.devices.isEmpty == true)
        }
    }
}

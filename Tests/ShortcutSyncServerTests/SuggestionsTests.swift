import Foundation
import NIOHTTP1
import PostgresNIO
import ShortcutSyncAPI
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncWorker
import Testing

/// `GET /v1/suggestions` against the real service and PostgreSQL (DESIGN §3, §5): a planted
/// routine comes first at its hour, a deletion makes the service forget it, apps a device has
/// not installed are never offered to it, and bad input gets 422.
@Suite struct SuggestionsTests {
    static let start: Int64 = 1_767_571_200_000  // Monday 2026-01-05 00:00 UTC
    static let hour: Int64 = 3_600_000
    static let day = 24 * hour
    static let week = 7 * day
    /// The Friday after the planted weeks, 18:20 UTC.
    static let nextFriday = start + 6 * week + 4 * day + 18 * hour + 20 * 60_000

    static func donation(_ identifier: String, bundle: String) -> EventBody {
        .donation(Donation(bundleId: bundle, identifier: identifier, kind: .intent, intentType: "I",
                           title: identifier.capitalized, utcOffsetMinutes: 0))
    }

    /// Six weeks of the phone: "atm" on Friday evenings, "coffee" every weekday at 8, "news"
    /// every evening; recorded in time order (the device's clock only moves forward).
    static func plant(on phone: SimulatedDevice) async throws {
        var donations: [(at: Int64, body: EventBody)] = []
        for week in 0..<6 {
            let monday = start + Int64(week) * Self.week
            donations.append((monday + 4 * day + 18 * hour + 600_000, donation("atm", bundle: "com.example.bank")))
            for weekday in 0..<5 { donations.append((monday + Int64(weekday) * day + 8 * hour + 300_000, donation("coffee", bundle: "com.example.life"))) }
            for weekday in 0..<7 { donations.append((monday + Int64(weekday) * day + 21 * hour, donation("news", bundle: "com.example.life"))) }
        }
        for (at, body) in donations.sorted(by: { $0.at < $1.at }) { phone.record(body, at: at) }
        try await phone.push()
    }

    static func suggestions(_ server: TestServer, _ device: SimulatedDevice, at: Int64, limit: Int = 4) async throws -> [[String: Any]] {
        let answer = try await server.raw(.GET, "/v1/suggestions?at=\(at)&limit=\(limit)&utcOffsetMinutes=0", token: device.token)
        #expect(answer.status == 200)
        #expect(answer.json["at"] as? Int64 == at || (answer.json["at"] as? Int).map(Int64.init) == at)
        return answer.json["suggestions"] as? [[String: Any]] ?? []
    }

    @Test func aPlantedRoutineComesFirstAtItsHourAndNotAtOthers() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token, name: "iPhone", platform: .iOS)
            try await Self.plant(on: phone)
            let friday = try await Self.suggestions(server, phone, at: Self.nextFriday)
            #expect(friday.first?["identifier"] as? String == "atm")
            #expect(friday.first?["title"] as? String == "Atm")
            #expect(friday.first?["reason"] as? String == "often on Friday evenings on this iPhone")
            #expect(friday.count <= 4)
            let tuesdayMorning = try await Self.suggestions(server, phone, at: Self.nextFriday - 3 * Self.day - 10 * Self.hour)
            #expect(tuesdayMorning.first?["identifier"] as? String == "coffee")
            let one = try await Self.suggestions(server, phone, at: Self.nextFriday, limit: 1)
            #expect(one.count == 1)
        }
    }

    @Test func aDeletionMakesTheServiceForgetWhatItsDonationsTaught() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            try await Self.plant(on: phone)
            #expect(try await Self.suggestions(server, phone, at: Self.nextFriday).first?["identifier"] as? String == "atm")
            phone.record(.deletion(Deletion(bundleId: "com.example.bank", selector: .all)), at: Self.nextFriday - Self.day)
            try await phone.push()
            let after = try await Self.suggestions(server, phone, at: Self.nextFriday, limit: 20)
            #expect(!after.isEmpty)
            #expect(!after.contains { $0["bundleId"] as? String == "com.example.bank" })
        }
    }

    /// Signing a device out forgets what it taught, through the log (issue 31): its sign-out is
    /// the device's last event, folded like a push, so the other devices are no longer offered
    /// its routines and a rebuild from the log agrees. Signing it out again adds nothing.
    @Test func aSignedOutDevicesRoutinesAreForgottenAndARebuildAgrees() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token, name: "iPhone", platform: .iOS)
            let mac = try await server.createDevice(accountToken: account.token, name: "Mac", platform: .macOS)
            try await Self.plant(on: phone)
            #expect(try await Self.suggestions(server, mac, at: Self.nextFriday).first?["identifier"] as? String == "atm",
                    "the Mac is offered what the phone taught")

            let versions = "SELECT coalesce(max(version), 0), count(*) FILTER (WHERE habits IS NOT NULL) FROM projection_shortcuts WHERE account_id = '\(account.id)'"
            let before = try await server.sql.query(PostgresQuery(unsafeSQL: versions), logger: TestDatabase.shared.logger)
                .decode((Int64, Int64).self).collectAll()
            #expect(before.first?.1 ?? 0 > 0, "the shortcuts' rows hold the phone's sums")
            #expect(try await server.raw(.DELETE, "/v1/devices/\(phone.id)", token: account.token).status == 204)
            #expect(try await Self.suggestions(server, mac, at: Self.nextFriday, limit: 20).isEmpty, "nothing the phone taught is left")
            // The views did not change: their rows keep their versions (no pull sends them again).
            let after = try await server.sql.query(PostgresQuery(unsafeSQL: versions), logger: TestDatabase.shared.logger)
                .decode((Int64, Int64).self).collectAll()
            #expect(after.first?.0 == before.first?.0)
            #expect(after.first?.1 == 0, "no shortcut's row holds sums any more")
            let inputs = try await ProjectionStore(client: server.sql, logger: TestDatabase.shared.logger).suggestionInputs(account: account.id, device: mac.id)
            #expect(inputs.candidates.isEmpty)

            // The sign-out is the phone's last event, with the greatest seq: nothing of it can follow.
            let signOuts = try await server.sql.query("SELECT seq FROM events WHERE type = 'deviceSignedOut' AND device_id = \(phone.id)",
                                                      logger: TestDatabase.shared.logger).decode(Int64.self).collectAll()
            #expect(signOuts == [Limits.seqRange.upperBound])
            #expect(try await server.raw(.DELETE, "/v1/devices/\(phone.id)", token: account.token).status == 204)
            let again = try await server.sql.query("SELECT count(*) FROM events WHERE type = 'deviceSignedOut'",
                                                   logger: TestDatabase.shared.logger).decode(Int64.self).collectAll()
            #expect(again == [1], "a second sign-out appends nothing")

            // The rows the pushes folded are the rows a fold of the whole log gives.
            let verification = try await ProjectionStore(client: server.sql, logger: TestDatabase.shared.logger).rebuilder.verify()
            #expect(verification.differences == [])
        }
    }

    /// A request costs what its candidates cost, not what the account holds (issue 31): beyond
    /// `suggestionCandidates` shortcuts it scores the most donated and the most recently donated,
    /// and a routine among many other shortcuts is still found at its hour.
    @Test func aLargeAccountIsScoredOverABoundedSetOfCandidates() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            try await Self.plant(on: phone)
            // 600 more shortcuts, each donated once, the week after the routine's six.
            let noise = 600
            for chunk in stride(from: 0, to: noise, by: 300) {
                for index in chunk..<chunk + 300 {
                    phone.record(Self.donation("noise-\(index)", bundle: "com.example.noise"), at: Self.start + 6 * Self.week + Int64(index) * 60_000)
                }
                try await phone.push()
            }
            let inputs = try await ProjectionStore(client: server.sql, logger: TestDatabase.shared.logger).suggestionInputs(account: account.id, device: phone.id)
            #expect(inputs.candidates.count <= 2 * ProjectionStore.suggestionCandidates, "\(inputs.candidates.count) shortcuts scored")
            #expect(inputs.candidates.count >= ProjectionStore.suggestionCandidates)
            for routine in ["atm", "coffee", "news"] {
                #expect(inputs.candidates.keys.contains { $0.identifier == routine }, "the most donated are candidates: \(routine)")
            }
            #expect(inputs.candidates.keys.contains { $0.identifier == "noise-\(noise - 1)" }, "the most recently donated is a candidate")
            #expect(try await Self.suggestions(server, phone, at: Self.nextFriday).first?["identifier"] as? String == "atm")
        }
    }

    @Test func appsNotInstalledOnTheDeviceAreNeverSuggested() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let iPad = try await server.createDevice(accountToken: account.token, name: "iPad", platform: .iPadOS)
            try await Self.plant(on: phone)
            // Before it reports its apps, the new iPad starts from the phone's habits.
            let fresh = try await Self.suggestions(server, iPad, at: Self.nextFriday)
            #expect(fresh.first?["identifier"] as? String == "atm")
            #expect(fresh.first?["reason"] as? String == "often at this time on your other devices")
            iPad.record(.appsReported(AppsReported(installed: ["com.example.life"])), at: Self.nextFriday - Self.day)
            try await iPad.push()
            for at in stride(from: Self.nextFriday - Self.week, to: Self.nextFriday + Self.day, by: Int(5 * Self.hour)) {
                let offered = try await Self.suggestions(server, iPad, at: at, limit: 20)
                #expect(offered.allSatisfy { $0["bundleId"] as? String == "com.example.life" }, "at \(at)")
            }
        }
    }

    /// A device that has few of the account's apps is offered candidates of its apps from the
    /// top of each order, but no further down than `reach` rows (issue 31: a device with none of
    /// them made each order walk every shortcut of the account). Bounds made small: 4 candidates,
    /// 16 rows.
    @Test func aDeviceWithFewOfTheAppsLooksNoFurtherThanTheReach() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let iPad = try await server.createDevice(accountToken: account.token, name: "iPad", platform: .iPadOS)
            // "far": the oldest and least donated, 22nd in both orders. "near": donated once,
            // among the 20 "noise" shortcuts donated twice: 9th most recent, 22nd most donated.
            var at = Self.start
            func next() -> Int64 { at += 60_000; return at }
            phone.record(Self.donation("far", bundle: "com.example.life"), at: next())
            for index in 0..<20 { phone.record(Self.donation("noise-\(index)", bundle: "com.example.noise"), at: next()) }
            for index in 0..<12 { phone.record(Self.donation("noise-\(index)", bundle: "com.example.noise"), at: next()) }
            phone.record(Self.donation("near", bundle: "com.example.life"), at: next())
            for index in 12..<20 { phone.record(Self.donation("noise-\(index)", bundle: "com.example.noise"), at: next()) }
            try await phone.push()
            iPad.record(.appsReported(AppsReported(installed: ["com.example.life"])), at: next())
            try await iPad.push()

            let store = ProjectionStore(client: server.sql, logger: TestDatabase.shared.logger)
            let reached = try await store.suggestionInputs(account: account.id, device: iPad.id, candidates: 4, reach: 16)
            #expect(Set(reached.candidates.keys.map(\.identifier)) == ["near"], "the app's shortcut within the reach, beyond the first 4")
            let unbounded = try await store.suggestionInputs(account: account.id, device: iPad.id, candidates: 4, reach: 100)
            #expect(Set(unbounded.candidates.keys.map(\.identifier)) == ["near", "far"])
            let everyApp = try await store.suggestionInputs(account: account.id, device: phone.id, candidates: 4, reach: 16)
            // The 4 most donated (twice, latest first) are the 4 most recent too.
            #expect(Set(everyApp.candidates.keys.map(\.identifier)) == Set((16..<20).map { "noise-\($0)" }))
        }
    }

    @Test func badLimitAtOrOffsetGets422AndOnlyADeviceMayAsk() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            for (query, pointer) in [("limit=0", "/limit"), ("limit=21", "/limit"), ("at=-1", "/at"), ("at=9007199254740992", "/at"),
                                     ("utcOffsetMinutes=841", "/utcOffsetMinutes"), ("utcOffsetMinutes=-721", "/utcOffsetMinutes")] {
                let answer = try await server.raw(.GET, "/v1/suggestions?\(query)", token: phone.token)
                #expect(answer.status == 422, "\(query)")
                #expect(answer.json["status"] as? Int == 422, "\(query): the body is problem+json")
                #expect(answer.json.pointers == [pointer], "\(query)")
            }
            // Extreme numbers are refused, never a crash.
            for query in ["limit=9223372036854775808", "at=99999999999999999999", "limit=abc", "at=1.5"] {
                let answer = try await server.raw(.GET, "/v1/suggestions?\(query)", token: phone.token)
                #expect([400, 422].contains(answer.status), "\(query) was answered \(answer.status)")
            }
            #expect(try await server.raw(.GET, "/v1/suggestions", token: account.token).status == 401)
            #expect(try await server.raw(.GET, "/v1/suggestions", token: nil).status == 401)
            // With nothing learned yet, the answer is empty, at the server's clock.
            let empty = try await server.raw(.GET, "/v1/suggestions", token: phone.token)
            #expect(empty.status == 200)
            #expect((empty.json["suggestions"] as? [Any])?.isEmpty == true)
            #expect(empty.json["at"] is NSNumber)
        }
    }

    @Test func aDonationsOffsetFromUTCIsValidated() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            for (offset, status) in [(841, 422), (-721, 422), (840, 200)] {
                let event = #"{"id":"\#(UUID())","seq":1,"hlc":{"wallMillis":\#(now),"counter":0},"type":"donation","bundleId":"com.example.soup","identifier":"x","kind":"intent","intentType":"I","title":"t","utcOffsetMinutes":\#(offset)}"#
                let answer = try await server.raw(.POST, "/v1/sync/push", token: phone.token, body: Array(#"{"events":[\#(event)]}"#.utf8))
                #expect(answer.status == status, "offset \(offset)")
                if status == 422 { #expect(answer.json.pointers == ["/events/0/utcOffsetMinutes"]) }
            }
        }
    }
}

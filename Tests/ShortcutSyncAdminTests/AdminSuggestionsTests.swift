import Foundation
import PostgresNIO
import ShortcutSyncAdmin
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

/// `admin suggestions`: what the service would offer a device at a time, with each score's parts.
@Suite struct AdminSuggestionsTests {
    @Test func aDevicesSuggestionsAreShownWithTheirParts() async throws {
        try await TestDatabase.withClient { client, _ in
            var phone = DeviceScript()
            try await register([phone], client: client)
            var log = PushLog(client: client)
            let monday: Int64 = 1_767_571_200_000, hour: Int64 = 3_600_000
            var events: [AcceptedEvent] = []
            for week in 0..<3 {
                let friday = monday + Int64(week) * 7 * 24 * hour + 4 * 24 * hour
                events.append(phone.donate("atm", bundle: "com.example.bank", at: friday + 18 * hour))
                events.append(phone.donate("coffee", bundle: "com.example.life", at: friday + 20 * hour))
            }
            try await log.push(phone, events)
            let admin = Operator(client: client, logger: TestDatabase.shared.logger)
            let fourthFriday: Int64 = monday + 3 * 7 * 24 * hour + 4 * 24 * hour
            let at = Date(timeIntervalSince1970: Double(fourthFriday + 18 * hour + 60_000) / 1000)
            let report = try await admin.suggestions(device: phone.deviceId, at: at, utcOffsetMinutes: nil, limit: 4)
            #expect(report.suggestions.map(\.identifier) == ["atm", "coffee"])
            let first = try #require(report.suggestions.first)
            #expect(first.parts.thisHour > 0)
            #expect(abs(first.score - first.parts.score) < 1e-9)
            #expect(report.hourOfWeek == 4 * 24 + 18)
            #expect(report.text.contains("com.example.bank/atm"))
            #expect(report.text.contains("THIS HOUR"))
            await #expect(throws: (any Error).self) {
                try await admin.suggestions(device: UUID(), at: at, utcOffsetMinutes: nil, limit: 4)
            }
        }
    }

    /// `--place` ranks as a request from there would, with each shortcut's place factor shown;
    /// `--explain` lists the places a shortcut is used at by their tokens' prefixes (issue 67).
    @Test func aPlaceRanksAsFromThereAndExplainShowsThePlaces() async throws {
        try await TestDatabase.withClient { client, _ in
            var phone = DeviceScript(detail: .minimal)
            try await register([phone], client: client)
            var log = PushLog(client: client)
            let monday: Int64 = 1_767_571_200_000, hour: Int64 = 3_600_000
            let bank = "b4" + String(repeating: "1", count: 30), cafe = "c0" + String(repeating: "2", count: 30)
            func placed(_ event: AcceptedEvent, _ place: String) -> AcceptedEvent {
                var event = event
                if case .donation(var donation) = event.event.body {
                    donation.place = place
                    event.event.body = .donation(donation)
                }
                return event
            }
            var events: [AcceptedEvent] = []
            for day in 0..<10 {
                let noon = monday + Int64(day) * 24 * hour + 12 * hour
                events.append(placed(phone.donate("atm", bundle: "com.example.bank", at: noon), bank))
                events.append(placed(phone.donate("coffee", bundle: "com.example.life", at: noon + 60_000), cafe))
            }
            try await log.push(phone, events)
            let admin = Operator(client: client, logger: TestDatabase.shared.logger)
            let at = Date(timeIntervalSince1970: Double(monday + 14 * 24 * hour + 12 * hour) / 1000)
            let atTheBank = try await admin.suggestions(device: phone.deviceId, at: at, utcOffsetMinutes: 0, places: [bank], limit: 2)
            let atTheCafe = try await admin.suggestions(device: phone.deviceId, at: at, utcOffsetMinutes: 0, places: [cafe], limit: 2)
            #expect(atTheBank.suggestions.map(\.identifier) == ["atm", "coffee"])
            #expect(atTheCafe.suggestions.map(\.identifier) == ["coffee", "atm"])
            #expect((atTheBank.suggestions.first?.parts.place ?? 0) > 0.9)
            #expect(atTheBank.text.contains("PLACE ×"))
            let explained = try await admin.habits(device: phone.deviceId, shortcut: ShortcutID(bundleId: "com.example.bank", identifier: "atm"), at: at)
            #expect(explained.places.map(\.prefix) == ["b4"])
            #expect(explained.text.contains("places (token prefix, weight): b4 ("))
        }
    }

    /// Without an offset, the local hour is taken at the device's latest donation's offset (the
    /// last one it pushed, found among its latest events); a given offset is taken as given.
    @Test func withoutAnOffsetTheDevicesLatestDonationsIsTaken() async throws {
        try await TestDatabase.withClient { client, _ in
            var phone = DeviceScript()
            try await register([phone], client: client)
            var log = PushLog(client: client)
            let monday: Int64 = 1_767_571_200_000, hour: Int64 = 3_600_000
            let earlier = phone.donate("atm", bundle: "com.example.bank", at: monday + hour)
            var later = phone.donate("coffee", bundle: "com.example.life", at: monday + 2 * hour)
            if case .donation(var donation) = later.event.body {
                donation.utcOffsetMinutes = 120
                later.event.body = .donation(donation)
            }
            try await log.push(phone, [earlier, later])
            let admin = Operator(client: client, logger: TestDatabase.shared.logger)
            let at = Date(timeIntervalSince1970: Double(monday + 3 * hour) / 1000)
            #expect(try await admin.suggestions(device: phone.deviceId, at: at, utcOffsetMinutes: nil, limit: 4).utcOffsetMinutes == 120)
            #expect(try await admin.suggestions(device: phone.deviceId, at: at, utcOffsetMinutes: -300, limit: 4).utcOffsetMinutes == -300)
        }
    }
}

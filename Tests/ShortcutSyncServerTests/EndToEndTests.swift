import Foundation
import ShortcutSyncAPI
import ShortcutSyncDomain
import Testing

@Suite struct EndToEndTests {
    static let soup = "com.example.soup"

    static func donation(_ identifier: String, group: String? = nil, title: String? = nil) -> EventBody {
        .donation(Donation(bundleId: soup, identifier: identifier, kind: .userActivity, activityType: "com.example.soup.order",
                           title: title ?? "Order \(identifier)", groupIdentifier: group))
    }

    /// Three devices, one offline while the others donate, assign phrases and delete: after
    /// everyone pushes and pulls, every view is equal and is the fold of DESIGN §3.
    @Test func threeDevicesConvergeOnTheFoldOfEverythingTheyDid() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token, name: "iPhone")
            let watch = try await server.createDevice(accountToken: account.token, name: "Watch", platform: .watchOS)
            let mac = try await server.createDevice(accountToken: account.token, name: "Mac", platform: .macOS)
            let t0 = Int64(Date().timeIntervalSince1970 * 1000) - 60_000
            let phoneVoice = UUID(), macVoice = UUID()

            // The Mac is offline: what it does now reaches the others only later.
            mac.record(Self.donation("bread"), at: t0 + 5)
            mac.record(.deletion(Deletion(bundleId: Self.soup, selector: .groupIdentifier("soups"))), at: t0 + 8)
            mac.record(.voiceShortcutAdded(VoiceShortcutAdded(voiceShortcutId: macVoice, phrase: "order SOUP!", bundleId: Self.soup,
                                                              identifier: "leek", title: "Order leek")), at: t0 + 15)

            phone.record(Self.donation("tomato", group: "soups"), at: t0)
            phone.record(Self.donation("leek", group: "soups"), at: t0 + 10)
            try await phone.push()
            try await phone.pull()
            watch.record(Self.donation("tomato", group: "soups", title: "Tomato, again"), at: t0 + 3)
            watch.record(.voiceShortcutAdded(VoiceShortcutAdded(voiceShortcutId: phoneVoice, phrase: "Order soup", bundleId: Self.soup,
                                                                identifier: "tomato", title: "Order tomato")), at: t0 + 20)
            let beforeMac = try await phone.pull(waitFor: try await watch.push())
            #expect(beforeMac.voiceShortcuts.upserted.first?.status == .active)

            let last = try await mac.push()
            for device in [phone, watch, mac] { try await device.pull(waitFor: last) }

            let expected = AccountState(folding: phone.accepted + watch.accepted + mac.accepted)
            for device in [phone, watch, mac] {
                #expect(device.view == expected.view(forDevice: device.id))
            }
            #expect(phone.view == watch.view && watch.view == mac.view)

            // What the rules say of this history, spelled out.
            let view = phone.view
            #expect(Set(view.shortcuts.keys.map(\.identifier)) == ["leek", "bread"])  // both tomato donations are older than the group deletion
            #expect(view.shortcuts[ShortcutID(bundleId: Self.soup, identifier: "leek")]?.donationCount == 1)
            #expect(view.voiceShortcuts[macVoice]?.status == .active)  // its phrase was set by the smaller key
            #expect(view.voiceShortcuts[phoneVoice]?.status == .phraseConflict)
            #expect(view.voiceShortcuts[phoneVoice]?.conflictsWith == macVoice)
            #expect(view.voiceShortcuts[phoneVoice]?.targetAvailable == false)

            // Cursor pulls applied to earlier views equal a fresh full pull.
            for device in [phone, watch, mac] {
                let incremental = device.view
                let full = try await device.pull(fresh: true)
                #expect(full.reset)
                #expect(device.view == incremental)
            }
        }
    }

    @Test func aCursorPullCarriesOnlyWhatChangedAndAppliesToTheSameView() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let ipad = try await server.createDevice(accountToken: account.token, name: "iPad", platform: .iPadOS)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            for index in 0..<5 { phone.record(Self.donation("soup-\(index)"), at: now + Int64(index)) }
            try await ipad.pull(waitFor: try await phone.push())
            #expect(ipad.view.shortcuts.count == 5)

            phone.record(.deletion(Deletion(bundleId: Self.soup, selector: .identifiers(["soup-1"]))), at: now + 10)
            phone.record(Self.donation("soup-2", title: "Renamed"), at: now + 11)
            let answer = try await ipad.pull(waitFor: try await phone.push())
            #expect(!answer.reset)
            #expect(answer.shortcuts.removed.map(\.identifier) == ["soup-1"])
            #expect(answer.shortcuts.upserted.map(\.identifier) == ["soup-2"])
            #expect(answer.lastAcceptedSeq == 0)

            let incremental = ipad.view
            try await ipad.pull(fresh: true)
            #expect(ipad.view == incremental)
            #expect(ipad.view.shortcuts.count == 4)

            // The phone's own pull reports its last accepted seq and the account's clock.
            let own = try await phone.pull()
            #expect(own.lastAcceptedSeq == 7)
            #expect(own.hlc.wallMillis == now + 11)
        }
    }

    @Test func aDeviceThatReportsItsAppsGetsItsOwnViewAndAResetOnce() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let watch = try await server.createDevice(accountToken: account.token, name: "Watch", platform: .watchOS)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            phone.record(Self.donation("tomato"), at: now)
            phone.record(.donation(Donation(bundleId: "com.example.coffee", identifier: "latte", kind: .intent,
                                            intentType: "OrderCoffeeIntent", title: "Latte")), at: now + 1)
            try await watch.pull(waitFor: try await phone.push())
            #expect(watch.view.shortcuts.count == 2)

            watch.record(.appsReported(AppsReported(installed: ["com.example.coffee"])), at: now + 2)
            let answer = try await watch.pull(waitFor: try await watch.push())
            #expect(answer.reset)
            #expect(watch.view.shortcuts.keys.map(\.bundleId) == ["com.example.coffee"])
            let phoneAnswer = try await phone.pull()
            #expect(phoneAnswer.shortcuts.upserted.count == 2)
        }
    }
}

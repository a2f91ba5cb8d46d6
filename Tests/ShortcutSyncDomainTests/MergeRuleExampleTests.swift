import Foundation
import Testing
@testable import ShortcutSyncDomain
import ShortcutSyncTestSupport

/// One worked example per rule of DESIGN §3.
@Suite struct MergeRuleExampleTests {
    var phone = DeviceScript()
    var watch = DeviceScript()
    var mac = DeviceScript()

    @Test mutating func deletionOlderThanDonationDoesNotHideIt() {
        let deletion = watch.delete(.identifiers(["tomato"]), at: 100)
        let donation = phone.donate("tomato", at: 200)
        let view = AccountState(folding: [donation, deletion]).view(forDevice: mac.deviceId)
        #expect(view.shortcuts[.soup("tomato")]?.donationCount == 1)
    }

    @Test mutating func deletionNewerThanDonationsHidesThemAndANewerDonationBringsItBack() {
        let first = phone.donate("tomato", at: 100)
        let second = mac.donate("tomato", title: "Tomato again", at: 150)
        let deletion = watch.delete(.identifiers(["tomato", "leek"]), at: 200)
        var state = AccountState(folding: [first, second, deletion])
        #expect(state.view(forDevice: phone.deviceId).shortcuts[.soup("tomato")] == nil)

        let comeback = phone.donate("tomato", title: "Back", at: 300)
        state.apply(comeback)
        let shortcut = state.view(forDevice: phone.deviceId).shortcuts[.soup("tomato")]
        #expect(shortcut?.title == "Back")
        #expect(shortcut?.donationCount == 1)
        #expect(shortcut?.lastDonatedAt == HLCTimestamp(wallMillis: 300))
    }

    @Test mutating func attributesComeFromTheLatestUncoveredDonationAndCountsOnlyUncoveredOnes() {
        let events = [
            phone.donate("tomato", title: "Old", at: 100),
            mac.donate("tomato", title: "Newest", at: 300),
            watch.donate("tomato", title: "Middle", at: 200),
        ]
        let shortcut = AccountState(folding: events).view(forDevice: phone.deviceId).shortcuts[.soup("tomato")]
        #expect(shortcut?.title == "Newest")
        #expect(shortcut?.donationCount == 3)
        #expect(shortcut?.lastDonatedAt == HLCTimestamp(wallMillis: 300))
    }

    @Test mutating func groupDeletionCoversOnlyOlderDonationsOfThatGroup() {
        let events = [
            phone.donate("tomato", group: "soups", at: 100),
            phone.donate("leek", group: "soups", at: 110),
            phone.donate("bread", group: "sides", at: 120),
            mac.delete(.groupIdentifier("soups"), at: 200),
            phone.donate("leek", group: "soups", title: "Leek later", at: 300),
        ]
        let view = AccountState(folding: events).view(forDevice: watch.deviceId)
        #expect(view.shortcuts[.soup("tomato")] == nil)
        #expect(view.shortcuts[.soup("leek")]?.title == "Leek later")
        #expect(view.shortcuts[.soup("leek")]?.donationCount == 1)
        #expect(view.shortcuts[.soup("bread")] != nil)
    }

    @Test mutating func groupDeletionLeavesAnOlderDonationOfAnotherGroupAsTheLatest() {
        let events = [
            phone.donate("tomato", group: "lunch", title: "Lunch tomato", at: 100),
            phone.donate("tomato", group: "dinner", title: "Dinner tomato", at: 150),
            mac.delete(.groupIdentifier("dinner"), at: 200),
        ]
        let shortcut = AccountState(folding: events).view(forDevice: phone.deviceId).shortcuts[.soup("tomato")]
        #expect(shortcut?.title == "Lunch tomato")
        #expect(shortcut?.groupIdentifier == "lunch")
        #expect(shortcut?.donationCount == 1)
    }

    @Test mutating func deleteAllCoversEveryOlderDonationOfThatAppOnly() {
        let events = [
            phone.donate("tomato", at: 100),
            phone.donate("leek", group: "soups", at: 110),
            phone.donate("latte", bundle: "com.example.coffee", at: 120),
            watch.delete(.all, at: 150),
            mac.donate("bread", at: 160),
        ]
        let view = AccountState(folding: events).view(forDevice: phone.deviceId)
        #expect(Set(view.shortcuts.keys) == [.soup("bread"), ShortcutID(bundleId: "com.example.coffee", identifier: "latte")])
    }

    @Test mutating func phraseConflictKeepsBothAndTheOwnerIsTheEarliestSetter() {
        let first = UUID(), second = UUID()
        let events = [
            mac.donate("tomato", at: 50),
            mac.donate("leek", at: 50),
            phone.addVoice(second, phrase: "ＯＲＤＥＲ ＳＯＵＰ", to: "leek", at: 200),
            watch.addVoice(first, phrase: "Order Soup!", to: "tomato", at: 100),
        ]
        let voices = AccountState(folding: events).view(forDevice: mac.deviceId).voiceShortcuts
        #expect(voices[first]?.status == .active)
        #expect(voices[first]?.conflictsWith == nil)
        #expect(voices[second]?.status == .phraseConflict)
        #expect(voices[second]?.conflictsWith == first)
        #expect(voices[second]?.normalizedPhrase == "order soup")
    }

    @Test mutating func whenThePhraseOwnerIsDeletedTheNextOneTakesThePhrase() {
        let first = UUID(), second = UUID(), third = UUID()
        var state = AccountState(folding: [
            watch.addVoice(first, phrase: "order soup", to: "tomato", at: 100),
            phone.addVoice(second, phrase: "Order soup.", to: "leek", at: 200),
            mac.addVoice(third, phrase: "order  SOUP", to: "bread", at: 300),
        ])
        state.apply(mac.deleteVoice(first, at: 50))  // a deletion is final whatever its clock says
        let voices = state.view(forDevice: phone.deviceId).voiceShortcuts
        #expect(voices[first] == nil)
        #expect(voices[second]?.status == .active)
        #expect(voices[third]?.conflictsWith == second)
    }

    @Test mutating func renamingAwayFromAConflictResolvesIt() {
        let first = UUID(), second = UUID()
        let events = [
            watch.addVoice(first, phrase: "soup", to: "tomato", at: 100),
            phone.addVoice(second, phrase: "soup", to: "leek", at: 200),
            phone.updateVoice(second, phrase: "leek soup", at: 300),
        ]
        let voices = AccountState(folding: events).view(forDevice: phone.deviceId).voiceShortcuts
        #expect(voices[first]?.status == .active)
        #expect(voices[second]?.status == .active)
        #expect(voices[second]?.phrase == "leek soup")
    }

    @Test mutating func updateAndDeleteThatArriveBeforeTheirAddApplyOnceItArrives() {
        let voice = UUID(), gone = UUID()
        let add = phone.addVoice(voice, phrase: "soup please", to: "tomato", at: 100)
        let update = watch.updateVoice(voice, phrase: "tomato soup", at: 200)
        let addGone = phone.addVoice(gone, phrase: "leek", to: "leek", at: 110)
        let deleteGone = watch.deleteVoice(gone, at: 90)

        var state = AccountState()
        state.apply(update)
        state.apply(deleteGone)
        #expect(state.view(forDevice: mac.deviceId).voiceShortcuts.isEmpty)
        state.apply(add)
        state.apply(addGone)
        let voices = state.view(forDevice: mac.deviceId).voiceShortcuts
        #expect(voices[voice]?.phrase == "tomato soup")
        #expect(voices[gone] == nil)
    }

    @Test mutating func deletingDonationsKeepsVoiceShortcutsButMarksTheirTargetUnavailable() {
        let voice = UUID()
        let events = [
            phone.donate("tomato", at: 100),
            phone.addVoice(voice, phrase: "tomato soup", to: "tomato", at: 110),
            watch.delete(.identifiers(["tomato"]), at: 200),
        ]
        let view = AccountState(folding: events).view(forDevice: mac.deviceId)
        #expect(view.shortcuts.isEmpty)
        #expect(view.voiceShortcuts[voice]?.targetAvailable == false)
    }

    @Test mutating func appsReportedFiltersShortcutsAndSetsAppInstalledForThatDeviceOnly() {
        let voice = UUID()
        let events = [
            phone.donate("tomato", at: 100),
            phone.donate("latte", bundle: "com.example.coffee", at: 100),
            phone.addVoice(voice, phrase: "coffee", to: "latte", bundle: "com.example.coffee", at: 120),
            watch.report(["com.example.coffee"], at: 90),
            watch.report(["com.example.soup"], at: 130),  // the latest report by key wins
        ]
        let state = AccountState(folding: events)
        let watchView = state.view(forDevice: watch.deviceId)
        #expect(Set(watchView.shortcuts.keys) == [.soup("tomato")])
        #expect(watchView.voiceShortcuts[voice]?.appInstalled == false)

        let phoneView = state.view(forDevice: phone.deviceId)
        #expect(phoneView.shortcuts.count == 2)
        #expect(phoneView.voiceShortcuts[voice]?.appInstalled == true)
        #expect(state.reportedApps == [watch.deviceId: ["com.example.soup"]])
    }

    @Test mutating func equalClocksAreOrderedByDeviceThenSeq() {
        // Same hlc on two devices: the device id decides which event is later.
        let (low, high) = phone.deviceId.uuidString < watch.deviceId.uuidString ? (phone, watch) : (watch, phone)
        var lowDevice = low, highDevice = high
        let donation = lowDevice.donate("tomato", at: 100)
        let deletion = highDevice.delete(.identifiers(["tomato"]), at: 100)
        #expect(AccountState(folding: [donation, deletion]).view(forDevice: mac.deviceId).shortcuts.isEmpty)

        var lowDevice2 = low, highDevice2 = high
        let laterDonation = highDevice2.donate("tomato", at: 100)
        let earlierDeletion = lowDevice2.delete(.identifiers(["tomato"]), at: 100)
        #expect(AccountState(folding: [laterDonation, earlierDeletion]).view(forDevice: mac.deviceId).shortcuts.count == 1)
    }
}

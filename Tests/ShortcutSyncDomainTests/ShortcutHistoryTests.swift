import Foundation
import ShortcutSyncDomain
import ShortcutSyncTestSupport
import Testing

/// `admin history`: what each event did to one shortcut, found by folding the log.
@Suite struct ShortcutHistoryTests {
    let tomato = ShortcutID(bundleId: "com.example.soup", identifier: "tomato")

    @Test func eachEventOfAShortcutsLifeIsNamedByItsEffect() {
        var phone = DeviceScript()
        var mac = DeviceScript(account: phone.account)
        let mine = UUID(), theirs = UUID()
        let log = [
            /* 0 */ phone.donate("tomato", group: "soups", at: 100),
            /* 1 */ phone.donate("tomato", group: "soups", at: 110),
            /* 2 */ mac.donate("tomato", group: "soups", title: "Tomato soup", at: 120),
            /* 3 */ phone.donate("leek", at: 125),  // another shortcut: not in the history
            /* 4 */ mac.addVoice(theirs, phrase: "Soup please", to: "leek", at: 126),
            /* 5 */ phone.addVoice(mine, phrase: "soup please!", to: "tomato", at: 130),
            /* 6 */ mac.deleteVoice(theirs, at: 140),
            /* 7 */ phone.delete(.identifiers(["tomato"]), at: 150),
            /* 8 */ mac.donate("tomato", group: "soups", at: 145),  // older than the deletion, arriving late
            /* 9 */ phone.delete(.groupIdentifier("soups"), at: 90),  // older than every donation
            /* 10 */ phone.donate("tomato", at: 160),
            /* 11 */ mac.donate("tomato", at: 170),
            /* 12 */ mac.delete(.all, at: 165),
        ]
        let entries = ShortcutHistory(shortcut: tomato).entries(of: log)
        let effects = Dictionary(uniqueKeysWithValues: entries.map { ($0.index, $0.effects) })

        #expect(entries.map(\.index) == [0, 1, 2, 5, 6, 7, 8, 9, 10, 11, 12])
        #expect(effects[0] == [.created])
        #expect(effects[1] == [.donatedAgain])
        #expect(effects[2] == [.attributesChanged(["title"])])
        #expect(effects[5] == [.voiceShortcutAdded(id: mine, phrase: "soup please!"), .phraseConflict(id: mine, with: theirs)])
        #expect(effects[6] == [.conflictResolved(id: mine)])
        #expect(effects[7] == [.deleted])
        #expect(effects[8] == [.coveredOnArrival])
        #expect(effects[9] == [.noChange])
        #expect(effects[10] == [.broughtBack])
        #expect(effects[11] == [.donatedAgain])
        #expect(effects[12] == [.donationsCovered(1)])
    }

    @Test func aLateDonationOlderThanADeletionOfAnExistingShortcutIsCoveredOnArrival() {
        var phone = DeviceScript()
        let log = [
            phone.donate("tomato", at: 100),
            phone.delete(.identifiers(["tomato"]), at: 200),
            phone.donate("tomato", at: 300),
            phone.donate("tomato", at: 150),
        ]
        let entries = ShortcutHistory(shortcut: tomato).entries(of: log)
        #expect(entries.map(\.effects) == [[.created], [.deleted], [.broughtBack], [.coveredOnArrival]])
    }

    @Test func anEventThatDoesNotTouchTheShortcutIsLeftOut() {
        var phone = DeviceScript()
        let log = [
            phone.donate("leek", at: 100),
            phone.report(["com.example.soup"], at: 110),
            phone.delete(.identifiers(["leek"]), at: 120),
        ]
        #expect(ShortcutHistory(shortcut: tomato).entries(of: log).isEmpty)
    }
}

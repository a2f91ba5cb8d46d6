import Foundation
import ShortcutSyncDomain
import Testing

/// Which donation of a push breaks an account's bound on shortcuts (DESIGN §5).
@Suite struct PersonLimitTests {
    func donation(_ identifier: String, seq: Int64) -> Event {
        Event(seq: seq, hlc: HLCTimestamp(wallMillis: 1), body: .donation(Donation(
            bundleId: "com.example.soup", identifier: identifier, kind: .intent, intentType: "OrderSoupIntent", title: identifier)))
    }

    @Test func theFirstDonationPastTheBoundIsNamedAndRepeatsCountOnce() {
        let events = [donation("a", seq: 1), donation("held", seq: 2), donation("a", seq: 3), donation("b", seq: 4), donation("c", seq: 5)]
        let new: Set = [ShortcutID(bundleId: "com.example.soup", identifier: "a"), ShortcutID(bundleId: "com.example.soup", identifier: "b"),
                        ShortcutID(bundleId: "com.example.soup", identifier: "c")]
        #expect(PersonLimit.firstShortcutBeyond(10, in: events, existing: 7, new: new) == nil)
        #expect(PersonLimit.firstShortcutBeyond(10, in: events, existing: 8, new: new) == .shortcutsPerAccount(max: 10, index: 4))
        #expect(PersonLimit.firstShortcutBeyond(10, in: events, existing: 9, new: new) == .shortcutsPerAccount(max: 10, index: 3))
        #expect(PersonLimit.firstShortcutBeyond(10, in: events, existing: 10, new: new) == .shortcutsPerAccount(max: 10, index: 0))
        // A slice of a push names the push's index.
        #expect(PersonLimit.firstShortcutBeyond(10, in: events[2...], existing: 9, new: new) == .shortcutsPerAccount(max: 10, index: 3))
        // Donations to shortcuts the account holds pass even at the bound.
        #expect(PersonLimit.firstShortcutBeyond(10, in: [donation("held", seq: 1)], existing: 10, new: []) == nil)
    }
}

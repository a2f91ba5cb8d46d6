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

    func donation(_ identifier: String, group: String?, seq: Int64) -> Event {
        Event(seq: seq, hlc: HLCTimestamp(wallMillis: 1), body: .donation(Donation(
            bundleId: "com.example.soup", identifier: identifier, kind: .intent, intentType: "OrderSoupIntent", title: identifier,
            groupIdentifier: group)))
    }

    @Test func theFirstDonationPastAShortcutsGroupsIsNamed() {
        let soup = ShortcutID(bundleId: "com.example.soup", identifier: "soup")
        let events = [donation("soup", group: "a", seq: 1), donation("soup", group: nil, seq: 2), donation("soup", group: "a", seq: 3),
                      donation("bread", group: "x", seq: 4), donation("soup", group: "b", seq: 5)]
        // Held before: "" and "c"; the batch adds "a" and "b" (its "" is held already).
        let gained = PersonLimit.groupsGained(by: events, holding: [soup: ["", "c"]])
        #expect(gained[soup] == GroupsGained(held: 4, new: ["a", "b"]))
        #expect(gained[ShortcutID(bundleId: "com.example.soup", identifier: "bread")] == GroupsGained(held: 1, new: ["x"]))
        #expect(PersonLimit.firstGroupBeyond(4, in: events, gained: gained) == nil)
        #expect(PersonLimit.firstGroupBeyond(3, in: events, gained: gained) == .groupsPerShortcut(max: 3, index: 4))
        #expect(PersonLimit.firstGroupBeyond(2, in: events, gained: gained) == .groupsPerShortcut(max: 2, index: 0))
        // A slice of a push names the push's index.
        #expect(PersonLimit.firstGroupBeyond(3, in: events[1...], gained: gained) == .groupsPerShortcut(max: 3, index: 4))
    }

    /// The batch fold says which groups a shortcut gained and how many it holds after: a group
    /// a deletion of the same batch empties is not held.
    @Test func theFoldCountsTheGroupsAShortcutHoldsAfterItsBatch() throws {
        let soup = ShortcutID(bundleId: "com.example.soup", identifier: "soup")
        let device = UUID()
        var events = [donation("soup", group: "a", seq: 1), donation("soup", group: "b", seq: 2), donation("soup", group: "c", seq: 3)]
        events.append(Event(seq: 4, hlc: HLCTimestamp(wallMillis: 2), body: .deletion(Deletion(bundleId: "com.example.soup", selector: .groupIdentifier("b")))))
        var fold = AccountBatchFold(before: AccountFoldRows())
        for (offset, event) in events.enumerated() {
            fold.apply(FoldEvent(AcceptedEvent(deviceId: device, event: event), version: Int64(offset) + 1))
        }
        let result = try fold.finish()
        #expect(result.groupsGained[soup] == GroupsGained(held: 2, new: ["a", "c"]))
    }
}

import Foundation
import PropertyBased
import Testing
@testable import ShortcutSyncDomain
import ShortcutSyncTestSupport

/// The merge rules as properties: the views depend on the set of accepted events only.
@Suite struct FoldPropertyTests {
    static let devices = (0..<4).map { UUID(uuidString: "00000000-0000-0000-0000-00000000000\($0 + 1)")! }
    static let identifiers = ["tomato", "leek", "bread"]
    static let bundles = ["com.example.soup", "com.example.coffee"]
    static let groups: [String?] = [nil, "lunch", "dinner"]
    static let phrases = ["Order soup", "order  SOUP!", "ＯＲＤＥＲ ＳＯＵＰ", "coffee", "Coffee…"]
    static let voices = (0..<3).map { UUID(uuidString: "10000000-0000-0000-0000-00000000000\($0 + 1)")! }

    /// One random history: each generated number becomes one event of one of four devices,
    /// over few identifiers, groups and phrases so that deletions, re-donations and phrase
    /// collisions happen. Clocks are drawn from a narrow range so that equal walls occur too.
    static func history(from choices: [Int]) -> [AcceptedEvent] {
        var seqs = [Int64](repeating: 0, count: devices.count)
        return choices.map { choice in
            var rng = SeededGenerator(seed: UInt64(choice))
            let device = Int.random(in: 0..<devices.count, using: &rng)
            seqs[device] += 1
            let bundle = bundles.randomElement(using: &rng)!
            let identifier = identifiers.randomElement(using: &rng)!
            let body: EventBody
            switch Int.random(in: 0..<12, using: &rng) {
            case 0..<4:
                body = .donation(Donation(
                    bundleId: bundle, identifier: identifier, kind: .intent, intentType: "OrderSoupIntent",
                    title: "t\(Int.random(in: 0..<3, using: &rng))", groupIdentifier: groups.randomElement(using: &rng)!))
            case 4:
                body = .deletion(Deletion(bundleId: bundle, selector: .identifiers(Array(identifiers.shuffled(using: &rng).prefix(2)))))
            case 5:
                body = .deletion(Deletion(bundleId: bundle, selector: .groupIdentifier(["lunch", "dinner"].randomElement(using: &rng)!)))
            case 6:
                body = .deletion(Deletion(bundleId: bundle, selector: .all))
            case 7, 8:
                body = .voiceShortcutAdded(VoiceShortcutAdded(
                    voiceShortcutId: voices.randomElement(using: &rng)!, phrase: phrases.randomElement(using: &rng)!,
                    bundleId: bundle, identifier: identifier, title: "t"))
            case 9:
                body = .voiceShortcutUpdated(VoiceShortcutUpdated(voiceShortcutId: voices.randomElement(using: &rng)!, phrase: phrases.randomElement(using: &rng)!))
            case 10:
                body = .voiceShortcutDeleted(VoiceShortcutDeleted(voiceShortcutId: voices.randomElement(using: &rng)!))
            default:
                body = .appsReported(AppsReported(installed: Array(bundles.shuffled(using: &rng).prefix(Int.random(in: 0...2, using: &rng)))))
            }
            let hlc = HLCTimestamp(wallMillis: Int64.random(in: 1000...1010, using: &rng), counter: Int.random(in: 0...1, using: &rng))
            return AcceptedEvent(deviceId: devices[device], event: Event(seq: seqs[device], hlc: hlc, body: body))
        }
    }

    static func views(_ state: AccountState) -> [DeviceView] {
        devices.map { state.view(forDevice: $0) }
    }

    static let choices = Gen.int(in: 0...Int(Int32.max)).array(of: 1...60)
    static let seeds = Gen.int(in: 0...Int(Int32.max))

    @Test func shuffledAndDuplicatedDeliveryGivesIdenticalViews() async {
        await propertyCheck(count: 300, input: Self.choices, Self.seeds) { choices, seed in
            let events = Self.history(from: choices)
            var rng = SeededGenerator(seed: UInt64(seed))
            var delivered = events + events.filter { _ in Bool.random(using: &rng) }
            delivered.shuffle(using: &rng)
            #expect(Self.views(AccountState(folding: delivered)) == Self.views(AccountState(folding: events)))
        }
    }

    @Test func foldIsIdempotent() async {
        await propertyCheck(count: 200, input: Self.choices) { choices in
            let events = Self.history(from: choices)
            let once = AccountState(folding: events)
            var twice = once
            for event in events.reversed() { twice.apply(event) }
            #expect(twice == once)
        }
    }

    @Test func viewChangesAppliedToTheOldViewGiveTheNewView() async {
        await propertyCheck(count: 200, input: Self.choices, Self.seeds) { choices, seed in
            let events = Self.history(from: choices)
            let cut = seed % (events.count + 1)
            let before = AccountState(folding: events.prefix(cut))
            let after = AccountState(folding: events)
            for device in Self.devices {
                let old = before.view(forDevice: device), new = after.view(forDevice: device)
                #expect(old.applying(new.changes(since: old)) == new)
            }
        }
    }

    /// Pulls filter the account's whole view and its changes per device: the changes of the
    /// whole view, made visible to a device whose apps did not change, turn its view before into
    /// its view after; and its view is the whole view made visible to it.
    @Test func changesOfTheWholeViewFilteredPerDeviceGiveEachDevicesView() async {
        await propertyCheck(count: 200, input: Self.choices, Self.seeds) { choices, seed in
            let events = Self.history(from: choices)
            let cut = seed % (events.count + 1)
            let before = AccountState(folding: events.prefix(cut))
            let after = AccountState(folding: events)
            let changes = after.accountView.changes(since: before.accountView)
            for device in Self.devices {
                let installed = after.installedApps(ofDevice: device)
                #expect(after.view(forDevice: device) == after.accountView.visible(toDeviceWith: installed))
                guard before.installedApps(ofDevice: device) == installed else { continue }
                let old = before.view(forDevice: device)
                #expect(old.applying(changes.visible(toDeviceWith: installed)) == after.view(forDevice: device))
            }
        }
    }

    @Test func everyVoiceShortcutSharingAPhraseWithAnotherHasExactlyOneActiveOwner() async {
        await propertyCheck(count: 200, input: Self.choices) { choices in
            let view = AccountState(folding: Self.history(from: choices)).accountView
            let byPhrase = Dictionary(grouping: view.voiceShortcuts.values, by: \.normalizedPhrase)
            for (_, sharing) in byPhrase {
                let active = sharing.filter { $0.status == .active }
                #expect(active.count == 1)
                for voice in sharing where voice.status == .phraseConflict {
                    #expect(voice.conflictsWith == active.first?.voiceShortcutId)
                }
            }
        }
    }

    /// An independent, brute-force reading of DESIGN §3 for shortcuts, to check the
    /// incremental state against: a donation survives unless some deletion covers it.
    @Test func shortcutsMatchABruteForceReadingOfTheRules() async {
        await propertyCheck(count: 200, input: Self.choices) { choices in
            let events = Self.history(from: choices)
            let donations = events.compactMap { event -> (EventKey, Donation)? in
                if case .donation(let d) = event.event.body { return (event.key, d) } else { return nil }
            }
            let deletions = events.compactMap { event -> (EventKey, Deletion)? in
                if case .deletion(let d) = event.event.body { return (event.key, d) } else { return nil }
            }
            let uncovered = donations.filter { key, donation in
                !deletions.contains { deletionKey, deletion in
                    guard deletion.bundleId == donation.bundleId, key < deletionKey else { return false }
                    switch deletion.selector {
                    case .identifiers(let ids): return ids.contains(donation.identifier)
                    case .groupIdentifier(let group): return donation.groupIdentifier == group
                    case .all: return true
                    }
                }
            }
            var expected: [ShortcutID: ShortcutView] = [:]
            for (id, group) in Dictionary(grouping: uncovered, by: { ShortcutID(bundleId: $0.1.bundleId, identifier: $0.1.identifier) }) {
                let latest = group.max { $0.0 < $1.0 }!
                expected[id] = ShortcutView(latest: latest.1, donationCount: group.count, lastDonatedAt: latest.0.hlc)
            }
            #expect(AccountState(folding: events).accountView.shortcuts == expected)
        }
    }

    /// An independent, brute-force reading of DESIGN §3 for voice shortcuts: one exists once an
    /// add for its id was accepted and no delete was; its phrase is that of its latest add or
    /// update, its target that of its latest add; among those sharing a normalized phrase, the
    /// one whose phrase was set by the smallest key owns it, the others conflict with the owner.
    @Test func voiceShortcutsMatchABruteForceReadingOfTheRules() async {
        await propertyCheck(count: 200, input: Self.choices) { choices in
            let events = Self.history(from: choices)
            let view = AccountState(folding: events).accountView
            var phraseSets: [UUID: [(key: EventKey, phrase: String)]] = [:]
            var adds: [UUID: [(key: EventKey, added: VoiceShortcutAdded)]] = [:]
            var deleted: Set<UUID> = []
            for event in events {
                switch event.event.body {
                case .voiceShortcutAdded(let added):
                    adds[added.voiceShortcutId, default: []].append((event.key, added))
                    phraseSets[added.voiceShortcutId, default: []].append((event.key, added.phrase))
                case .voiceShortcutUpdated(let updated):
                    phraseSets[updated.voiceShortcutId, default: []].append((event.key, updated.phrase))
                case .voiceShortcutDeleted(let gone):
                    deleted.insert(gone.voiceShortcutId)
                default:
                    break
                }
            }
            let existing = adds.keys.filter { !deleted.contains($0) }
            let current = Dictionary(uniqueKeysWithValues: existing.map { id in (id, phraseSets[id]!.max { $0.key < $1.key }!) })
            let byPhrase = Dictionary(grouping: existing) { PhraseNormalizer.normalize(current[$0]!.phrase) }
            #expect(Set(view.voiceShortcuts.keys) == Set(existing))
            for (normalized, sharing) in byPhrase {
                let owner = sharing.min { current[$0]!.key < current[$1]!.key }!
                for id in sharing {
                    let target = adds[id]!.max { $0.key < $1.key }!.added
                    let seen = view.voiceShortcuts[id]
                    #expect(seen?.phrase == current[id]!.phrase)
                    #expect(seen?.normalizedPhrase == normalized)
                    #expect(seen?.bundleId == target.bundleId && seen?.identifier == target.identifier)
                    #expect(seen?.status == (id == owner ? .active : .phraseConflict))
                    #expect(seen?.conflictsWith == (id == owner ? nil : owner))
                    #expect(seen?.targetAvailable == (view.shortcuts[ShortcutID(bundleId: target.bundleId, identifier: target.identifier)] != nil))
                }
            }
        }
    }
}

import Foundation
import ShortcutSyncDomain

/// A realistic history of one account for benchmarks, the same for the same seed.
///
/// Four devices; mostly donations over a few dozen identifiers of three apps (some in groups),
/// some deletions by identifiers, by group and all, voice shortcuts whose phrases collide, and
/// `appsReported` from two of the devices. Clocks move forward with a little skew between devices.
public struct BenchmarkHistory: Sendable {
    public struct Device: Sendable {
        public let id: UUID
        public fileprivate(set) var seq: Int64 = 0
    }

    public private(set) var devices: [Device]
    private var random: SplitMix64
    private var wall: Int64
    private let voices: [UUID]
    private static let bundles = ["com.example.soup", "com.example.coffee", "com.example.maps"]
    private static let phrases = ["Order soup", "order  soup!", "Coffee time", "Take me home", "ＯＲＤＥＲ ＳＯＵＰ", "Soup please"]

    public init(seed: UInt64, startMillis: Int64 = 1_763_712_000_000) {
        var random = SplitMix64(state: seed)
        devices = (0..<4).map { _ in Device(id: random.nextUUID()) }
        voices = (0..<6).map { _ in random.nextUUID() }
        self.random = random
        wall = startMillis
    }

    /// The next `count` events of one device (chosen at random), in its seq order.
    public mutating func nextBatch(count: Int) -> (device: UUID, events: [Event]) {
        let index = Int.random(in: devices.indices, using: &random)
        var events: [Event] = []
        events.reserveCapacity(count)
        for _ in 0..<count {
            wall += Int64.random(in: 0...40, using: &random)
            devices[index].seq += 1
            let skew = Int64(index) * 7
            events.append(Event(seq: devices[index].seq, hlc: HLCTimestamp(wallMillis: wall + skew, counter: 0),
                                body: nextBody(deviceIndex: index)))
        }
        return (devices[index].id, events)
    }

    private mutating func nextBody(deviceIndex: Int) -> EventBody {
        let bundle = Self.bundles.randomElement(using: &random)!
        let identifier = "item-\(Int.random(in: 0..<40, using: &random))"
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<82:
            let group: String? = Int.random(in: 0..<4, using: &random) == 0 ? "group-\(Int.random(in: 0..<3, using: &random))" : nil
            return .donation(Donation(
                bundleId: bundle, identifier: identifier, kind: .intent, intentType: "OrderIntent",
                title: "Order \(identifier)", groupIdentifier: group, keywords: ["order", "lunch"],
                parameters: ["size": .string("large"), "count": .number(Double(Int.random(in: 1...3, using: &random)))]))
        case 82..<86:
            return .deletion(Deletion(bundleId: bundle, selector: .identifiers([identifier, "item-\(Int.random(in: 0..<40, using: &random))"])))
        case 86..<88:
            return .deletion(Deletion(bundleId: bundle, selector: .groupIdentifier("group-\(Int.random(in: 0..<3, using: &random))")))
        case 88:
            return .deletion(Deletion(bundleId: bundle, selector: .all))
        case 89..<93:
            return .voiceShortcutAdded(VoiceShortcutAdded(
                voiceShortcutId: voices.randomElement(using: &random)!, phrase: Self.phrases.randomElement(using: &random)!,
                bundleId: bundle, identifier: identifier, title: "Order \(identifier)"))
        case 93..<96:
            return .voiceShortcutUpdated(VoiceShortcutUpdated(
                voiceShortcutId: voices.randomElement(using: &random)!, phrase: Self.phrases.randomElement(using: &random)!))
        case 96:
            return .voiceShortcutDeleted(VoiceShortcutDeleted(voiceShortcutId: voices.randomElement(using: &random)!))
        default:
            // Two of the four devices report their apps, sometimes without one of them; the
            // other two never do.
            guard deviceIndex < 2 else { return .voiceShortcutDeleted(VoiceShortcutDeleted(voiceShortcutId: voices[0])) }
            return .appsReported(AppsReported(installed: Self.bundles.filter { _ in Int.random(in: 0..<5, using: &random) > 0 }))
        }
    }
}

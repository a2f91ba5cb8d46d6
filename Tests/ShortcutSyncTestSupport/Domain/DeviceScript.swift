import Foundation
import ShortcutSyncDomain

/// One device of one account, scripting the events it would push: its own seq counter, and the
/// wall clock the test names for each event.
public struct DeviceScript: Sendable {
    /// How much an event carries beyond what the test names.
    public enum Detail: Sendable {
        /// HLC counter 0, so an event's clock is exactly the wall given, and bare user-activity
        /// donations titled "Order <identifier>": for worked examples that name clocks and titles.
        case minimal
        /// Counters that cycle with the seq and intent donations with keywords, parameters and a
        /// title that changes with the wall: for stored forms, which must carry every field.
        case full
    }

    public let account: UUID
    public let deviceId: UUID
    public let detail: Detail
    /// The seq of the last event made; the next one gets `seq + 1`.
    public var seq: Int64 = 0

    public init(_ deviceId: UUID = UUID(), account: UUID = UUID(), detail: Detail = .minimal) {
        self.deviceId = deviceId
        self.account = account
        self.detail = detail
    }

    /// The next event of this device at `wall`; `counter` overrides the HLC counter `detail` gives.
    public mutating func event(at wall: Int64, counter: Int? = nil, _ body: EventBody) -> AcceptedEvent {
        seq += 1
        let counter = counter ?? (detail == .full ? Int(seq % 3) : 0)
        return AcceptedEvent(deviceId: deviceId, event: Event(id: eventID(seq), seq: seq, hlc: HLCTimestamp(wallMillis: wall, counter: counter), body: body))
    }

    /// The id of this device's event `seq`: derived from both, so a scripted history has the
    /// same ids every time it is made.
    func eventID(_ seq: Int64) -> UUID {
        let device = deviceId.uuid
        let seed = withUnsafeBytes(of: device) { $0.loadUnaligned(as: UInt64.self) ^ $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self) }
        var random = SeededGenerator(seed: seed ^ UInt64(bitPattern: seq) &* 0x9E37_79B9_7F4A_7C15)
        return random.uuid()
    }

    public mutating func donate(_ identifier: String, bundle: String = "com.example.soup", group: String? = nil, title: String? = nil, at wall: Int64) -> AcceptedEvent {
        let donation = switch detail {
        case .minimal:
            Donation(
                bundleId: bundle, identifier: identifier, kind: .userActivity, activityType: "com.example.soup.order",
                title: title ?? "Order \(identifier)", groupIdentifier: group)
        case .full:
            Donation(
                bundleId: bundle, identifier: identifier, kind: .intent, intentType: "OrderIntent",
                title: title ?? "Order \(identifier) at \(wall)", groupIdentifier: group, keywords: ["order"],
                parameters: ["size": .string("large"), "count": .number(2)], place: Self.place(of: identifier, at: wall))
        }
        return event(at: wall, .donation(donation))
    }

    /// Where a full donation is made: a place token of its own for each identifier, two times in
    /// three (by its clock), none the third, so that every path a donation takes carries places too.
    static func place(of identifier: String, at wall: Int64) -> String? {
        guard wall % 3 != 0 else { return nil }
        let slot = identifier.utf8.reduce(0) { ($0 &* 31 &+ Int($1)) & 0xFF }
        return String(format: "%02x", slot) + String(repeating: "7", count: PlaceToken.length - 2)
    }

    public mutating func delete(_ selector: DeletionSelector, bundle: String = "com.example.soup", at wall: Int64) -> AcceptedEvent {
        event(at: wall, .deletion(Deletion(bundleId: bundle, selector: selector)))
    }

    public mutating func addVoice(_ id: UUID, phrase: String, to identifier: String, bundle: String = "com.example.soup", at wall: Int64) -> AcceptedEvent {
        event(at: wall, .voiceShortcutAdded(VoiceShortcutAdded(
            voiceShortcutId: id, phrase: phrase, bundleId: bundle, identifier: identifier, title: "Order \(identifier)")))
    }

    public mutating func updateVoice(_ id: UUID, phrase: String, at wall: Int64) -> AcceptedEvent {
        event(at: wall, .voiceShortcutUpdated(VoiceShortcutUpdated(voiceShortcutId: id, phrase: phrase)))
    }

    public mutating func deleteVoice(_ id: UUID, at wall: Int64) -> AcceptedEvent {
        event(at: wall, .voiceShortcutDeleted(VoiceShortcutDeleted(voiceShortcutId: id)))
    }

    public mutating func report(_ installed: [String], at wall: Int64) -> AcceptedEvent {
        event(at: wall, .appsReported(AppsReported(installed: installed)))
    }

    public mutating func forget(_ scope: LearningScope, at wall: Int64) -> AcceptedEvent {
        event(at: wall, .learningForgotten(LearningForgotten(scope: scope)))
    }

    public mutating func pause(_ scope: LearningScope, _ paused: Bool = true, at wall: Int64) -> AcceptedEvent {
        event(at: wall, .learningPaused(LearningPaused(scope: scope, paused: paused)))
    }
}

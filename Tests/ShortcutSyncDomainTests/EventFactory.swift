import Foundation
import ShortcutSyncDomain

/// Builds accepted events for one simulated device, with its own seq counter.
struct DeviceScript {
    let deviceId: UUID
    var seq: Int64 = 0

    init(_ deviceId: UUID = UUID()) {
        self.deviceId = deviceId
    }

    mutating func event(at wall: Int64, counter: Int = 0, _ body: EventBody) -> AcceptedEvent {
        seq += 1
        return AcceptedEvent(deviceId: deviceId, event: Event(seq: seq, hlc: HLCTimestamp(wallMillis: wall, counter: counter), body: body))
    }

    mutating func donate(_ identifier: String, bundle: String = "com.example.soup", group: String? = nil, title: String? = nil, at wall: Int64) -> AcceptedEvent {
        event(at: wall, .donation(Donation(
            bundleId: bundle, identifier: identifier, kind: .userActivity, activityType: "com.example.soup.order",
            title: title ?? "Order \(identifier)", groupIdentifier: group)))
    }

    mutating func delete(_ selector: DeletionSelector, bundle: String = "com.example.soup", at wall: Int64) -> AcceptedEvent {
        event(at: wall, .deletion(Deletion(bundleId: bundle, selector: selector)))
    }

    mutating func addVoice(_ id: UUID, phrase: String, to identifier: String, bundle: String = "com.example.soup", at wall: Int64) -> AcceptedEvent {
        event(at: wall, .voiceShortcutAdded(VoiceShortcutAdded(voiceShortcutId: id, phrase: phrase, bundleId: bundle, identifier: identifier, title: "Order \(identifier)")))
    }

    mutating func updateVoice(_ id: UUID, phrase: String, at wall: Int64) -> AcceptedEvent {
        event(at: wall, .voiceShortcutUpdated(VoiceShortcutUpdated(voiceShortcutId: id, phrase: phrase)))
    }

    mutating func deleteVoice(_ id: UUID, at wall: Int64) -> AcceptedEvent {
        event(at: wall, .voiceShortcutDeleted(VoiceShortcutDeleted(voiceShortcutId: id)))
    }

    mutating func report(_ installed: [String], at wall: Int64) -> AcceptedEvent {
        event(at: wall, .appsReported(AppsReported(installed: installed)))
    }
}

/// A small deterministic generator, so a failing property names a seed that reproduces it.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension ShortcutID {
    static func soup(_ identifier: String) -> ShortcutID {
        ShortcutID(bundleId: "com.example.soup", identifier: identifier)
    }
}

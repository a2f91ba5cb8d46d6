import Foundation

/// What the per-item fold needs of one accepted event: its key, its place in the log and what it
/// changes. A donation is reduced to the shortcut and group it counts for; its attributes stay in
/// the log, and a projected shortcut takes them from the event at `version` (its latest donation).
public struct FoldEvent: Sendable, Hashable {
    public enum Change: Sendable, Hashable {
        /// A donation of a shortcut, in `group` ("" when it has none).
        case donation(ShortcutID, group: String)
        case deletion(Deletion)
        case voiceShortcutAdded(VoiceShortcutAdded)
        case voiceShortcutUpdated(VoiceShortcutUpdated)
        case voiceShortcutDeleted(UUID)
        /// The reporting device is the key's device.
        case appsReported(Set<String>)
        /// The key's device was signed out: its suggestion sums are dropped.
        case signedOut
        case learningForgotten(LearningScope)
        case learningPaused(LearningScope, paused: Bool)
    }

    public var key: EventKey
    /// The event's version: its place in its account's log.
    public var version: Int64
    public var change: Change
    /// What a donation teaches the suggestions; nil for other events and for donations not
    /// `eligibleForPrediction` (they teach nothing).
    public var habit: HabitDonation?

    public init(key: EventKey, version: Int64, change: Change, habit: HabitDonation? = nil) {
        self.key = key
        self.version = version
        self.change = change
        self.habit = habit
    }

    public init(_ accepted: AcceptedEvent, version: Int64) {
        key = accepted.key
        self.version = version
        switch accepted.event.body {
        case .donation(let donation):
            change = .donation(ShortcutID(bundleId: donation.bundleId, identifier: donation.identifier),
                               group: donation.groupIdentifier ?? "")
            if donation.eligibleForPrediction {
                habit = HabitDonation(deviceId: accepted.deviceId, wallMillis: accepted.event.hlc.wallMillis,
                                      utcOffsetMinutes: donation.utcOffsetMinutes ?? 0, placeToken: donation.place)
            }
        case .deletion(let deletion):
            change = .deletion(deletion)
        case .voiceShortcutAdded(let added):
            change = .voiceShortcutAdded(added)
        case .voiceShortcutUpdated(let updated):
            change = .voiceShortcutUpdated(updated)
        case .voiceShortcutDeleted(let deleted):
            change = .voiceShortcutDeleted(deleted.voiceShortcutId)
        case .appsReported(let report):
            change = .appsReported(Set(report.installed))
        case .signedOut:
            change = .signedOut
        case .learningForgotten(let forgotten):
            change = .learningForgotten(forgotten.scope)
        case .learningPaused(let paused):
            change = .learningPaused(paused.scope, paused: paused.paused)
        }
    }
}

extension FoldEvent {
    /// Whether the event changes which donations teach the suggestions (`LearningRules`).
    public var changesLearning: Bool {
        switch change {
        case .learningForgotten, .learningPaused, .signedOut: true
        default: false
        }
    }
}

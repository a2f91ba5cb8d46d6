import Foundation

/// A shortcut's identity within an account: the app and the identifier the app gave it.
public struct ShortcutID: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public var bundleId: String
    public var identifier: String

    public init(bundleId: String, identifier: String) {
        self.bundleId = bundleId
        self.identifier = identifier
    }

    public static func < (lhs: ShortcutID, rhs: ShortcutID) -> Bool {
        (lhs.bundleId, lhs.identifier) < (rhs.bundleId, rhs.identifier)
    }

    public var description: String { "\(bundleId)/\(identifier)" }
}

/// A shortcut as a device sees it: the attributes of its latest uncovered donation.
public struct ShortcutView: Sendable, Hashable, Codable {
    public var bundleId: String
    public var identifier: String
    public var kind: DonationKind
    public var activityType: String?
    public var intentType: String?
    public var title: String
    public var subtitle: String?
    public var groupIdentifier: String?
    public var suggestedInvocationPhrase: String?
    public var keywords: [String]
    public var eligibleForSearch: Bool
    public var eligibleForPrediction: Bool
    public var parameters: [String: JSONValue]
    /// How many of its donations no deletion covers.
    public var donationCount: Int
    /// The hlc of the latest uncovered donation.
    public var lastDonatedAt: HLCTimestamp

    public init(latest donation: Donation, donationCount: Int, lastDonatedAt: HLCTimestamp) {
        bundleId = donation.bundleId
        identifier = donation.identifier
        kind = donation.kind
        activityType = donation.activityType
        intentType = donation.intentType
        title = donation.title
        subtitle = donation.subtitle
        groupIdentifier = donation.groupIdentifier
        suggestedInvocationPhrase = donation.suggestedInvocationPhrase
        keywords = donation.keywords
        eligibleForSearch = donation.eligibleForSearch
        eligibleForPrediction = donation.eligibleForPrediction
        parameters = donation.parameters
        self.donationCount = donationCount
        self.lastDonatedAt = lastDonatedAt
    }

    public var shortcutID: ShortcutID { ShortcutID(bundleId: bundleId, identifier: identifier) }
}

/// Whether a voice shortcut owns its phrase or waits for the person to choose another.
public enum VoiceShortcutStatus: String, Sendable, Hashable, Codable {
    case active
    case phraseConflict
}

/// A voice shortcut as a device sees it.
public struct VoiceShortcutView: Sendable, Hashable, Codable {
    public var voiceShortcutId: UUID
    public var phrase: String
    public var normalizedPhrase: String
    public var bundleId: String
    public var identifier: String
    public var title: String
    public var status: VoiceShortcutStatus
    /// The id of the voice shortcut that owns the phrase, when `status` is `phraseConflict`.
    public var conflictsWith: UUID?
    /// False when the shortcut it is bound to does not exist (its donations were deleted).
    public var targetAvailable: Bool
    /// Whether the app is installed on the device that reads this view.
    public var appInstalled: Bool

    public init(
        voiceShortcutId: UUID, phrase: String, normalizedPhrase: String, bundleId: String,
        identifier: String, title: String, status: VoiceShortcutStatus, conflictsWith: UUID?,
        targetAvailable: Bool, appInstalled: Bool
    ) {
        self.voiceShortcutId = voiceShortcutId
        self.phrase = phrase
        self.normalizedPhrase = normalizedPhrase
        self.bundleId = bundleId
        self.identifier = identifier
        self.title = title
        self.status = status
        self.conflictsWith = conflictsWith
        self.targetAvailable = targetAvailable
        self.appInstalled = appInstalled
    }
}

/// Everything one device sees.
public struct DeviceView: Sendable, Hashable {
    public var shortcuts: [ShortcutID: ShortcutView]
    public var voiceShortcuts: [UUID: VoiceShortcutView]

    public init(shortcuts: [ShortcutID: ShortcutView] = [:], voiceShortcuts: [UUID: VoiceShortcutView] = [:]) {
        self.shortcuts = shortcuts
        self.voiceShortcuts = voiceShortcuts
    }

    public static let empty = DeviceView()

    /// What changed from `old` to this view: applying it to `old` gives this view exactly.
    public func changes(since old: DeviceView) -> ViewChanges {
        var changes = ViewChanges()
        for (id, view) in shortcuts where old.shortcuts[id] != view {
            changes.upsertedShortcuts.append(view)
        }
        for id in old.shortcuts.keys where shortcuts[id] == nil {
            changes.removedShortcuts.append(id)
        }
        for (id, view) in voiceShortcuts where old.voiceShortcuts[id] != view {
            changes.upsertedVoiceShortcuts.append(view)
        }
        for id in old.voiceShortcuts.keys where voiceShortcuts[id] == nil {
            changes.removedVoiceShortcuts.append(id)
        }
        return changes
    }

    /// This view with `changes` applied, as a device applies a pull answer.
    public func applying(_ changes: ViewChanges) -> DeviceView {
        var result = self
        for id in changes.removedShortcuts { result.shortcuts[id] = nil }
        for view in changes.upsertedShortcuts { result.shortcuts[view.shortcutID] = view }
        for id in changes.removedVoiceShortcuts { result.voiceShortcuts[id] = nil }
        for view in changes.upsertedVoiceShortcuts { result.voiceShortcuts[view.voiceShortcutId] = view }
        return result
    }
}

/// The difference between two views of one device, in the shape of a pull answer.
public struct ViewChanges: Sendable, Hashable {
    public var upsertedShortcuts: [ShortcutView] = []
    public var removedShortcuts: [ShortcutID] = []
    public var upsertedVoiceShortcuts: [VoiceShortcutView] = []
    public var removedVoiceShortcuts: [UUID] = []

    public init() {}

    public var isEmpty: Bool {
        upsertedShortcuts.isEmpty && removedShortcuts.isEmpty && upsertedVoiceShortcuts.isEmpty && removedVoiceShortcuts.isEmpty
    }
}

extension DeviceView {
    /// What a device sees of the account's whole view (DESIGN §3): with `installed` nil (it never
    /// reported its apps) everything; otherwise only the shortcuts of apps it has, and every voice
    /// shortcut with `appInstalled` saying whether it has the target's app.
    ///
    /// The projections keep one row per item and account, and pulls apply this per device.
    public func visible(toDeviceWith installed: Set<String>?) -> DeviceView {
        guard let installed else { return self }
        var voices = voiceShortcuts
        for (id, voice) in voices { voices[id]?.appInstalled = installed.contains(voice.bundleId) }
        return DeviceView(shortcuts: shortcuts.filter { installed.contains($0.key.bundleId) }, voiceShortcuts: voices)
    }
}

extension ViewChanges {
    /// The same changes of the account's whole view, as a device with `installed` apps (nil:
    /// never reported) sees them: applied to its view before, they give its view after, as long
    /// as its apps did not change in between (a cursor carries the device's app-set version).
    public func visible(toDeviceWith installed: Set<String>?) -> ViewChanges {
        guard let installed else { return self }
        var visible = ViewChanges()
        visible.upsertedShortcuts = upsertedShortcuts.filter { installed.contains($0.bundleId) }
        visible.removedShortcuts = removedShortcuts.filter { installed.contains($0.bundleId) }
        visible.upsertedVoiceShortcuts = upsertedVoiceShortcuts.map { voice in
            var voice = voice
            voice.appInstalled = installed.contains(voice.bundleId)
            return voice
        }
        visible.removedVoiceShortcuts = removedVoiceShortcuts
        return visible
    }
}

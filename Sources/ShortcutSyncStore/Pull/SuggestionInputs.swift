import Foundation
import ShortcutSyncDomain

/// What the suggestions of one device are computed from: the sums of the shortcuts of its view
/// (its installed apps' only, once it reported them), and the device.
public struct SuggestionInputs: Sendable {
    /// The account version the rows include (0: nothing folded yet).
    public var version: Int64
    /// The device's platform, for reasons ("on this iPhone"); nil if it is not the account's.
    public var platform: String?
    /// The offset of the device's latest donation, the default for the local hour asked about.
    public var latestUTCOffsetMinutes: Int?
    public var candidates: [ShortcutID: ShortcutHabits]
    /// Whether `candidates` are those kept from the device's last request (`SuggestionCandidateCache`).
    public var fromKeptSums = false

    public init(version: Int64 = 0, platform: String? = nil, latestUTCOffsetMinutes: Int? = nil,
                candidates: [ShortcutID: ShortcutHabits] = [:]) {
        self.version = version
        self.platform = platform
        self.latestUTCOffsetMinutes = latestUTCOffsetMinutes
        self.candidates = candidates
    }
}

import Foundation

/// How a shortcut was donated on the device.
public enum DonationKind: String, Sendable, Hashable, Codable, CaseIterable {
    case userActivity
    case intent
}

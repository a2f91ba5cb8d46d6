import Foundation
import ShortcutSyncAPI

/// One shortcut the service suggests now, and why.
public struct SuggestedShortcut: Sendable, Hashable, Codable {
    public var bundleId: String
    public var identifier: String
    public var title: String
    public var score: Double
    public var reason: String

    public init(bundleId: String, identifier: String, title: String, score: Double, reason: String) {
        self.bundleId = bundleId
        self.identifier = identifier
        self.title = title
        self.score = score
        self.reason = reason
    }
}

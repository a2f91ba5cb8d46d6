import Foundation

/// One shortcut offered for a moment: its score, the score's parts and why, in a few words.
public struct ScoredSuggestion: Sendable, Hashable {
    public var shortcut: ShortcutID
    public var score: Double
    public var parts: SuggestionParts
    public var reason: String

    public init(shortcut: ShortcutID, score: Double, parts: SuggestionParts, reason: String) {
        self.shortcut = shortcut
        self.score = score
        self.parts = parts
        self.reason = reason
    }
}

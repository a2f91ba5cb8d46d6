import Foundation
import ShortcutSyncAPI

/// The answer of `GET /v1/suggestions`; `offline` when it is the last answer kept on the device
/// because the service could not be reached.
public struct SuggestionsAnswer: Sendable, Hashable, Codable {
    /// The account version the suggestions include.
    public var version: Int64
    /// The moment they were made for, in epoch milliseconds.
    public var at: Int64
    public var suggestions: [SuggestedShortcut]
    public var offline: Bool = false

    public init(version: Int64, at: Int64, suggestions: [SuggestedShortcut], offline: Bool = false) {
        self.version = version
        self.at = at
        self.suggestions = suggestions
        self.offline = offline
    }
}

extension SuggestionsAnswer {
    /// The domain's reading of the wire answer.
    init(_ answer: Components.Schemas.SuggestionsResponse) {
        self.init(version: answer.version, at: answer.at, suggestions: answer.suggestions.map {
            SuggestedShortcut(bundleId: $0.bundleId, identifier: $0.identifier, title: $0.title, score: $0.score, reason: $0.reason)
        })
    }
}

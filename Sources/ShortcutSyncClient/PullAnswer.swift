import Foundation
import HTTPTypes
import OpenAPIRuntime
import ShortcutSyncAPI
import ShortcutSyncDomain

/// A pull's answer, in domain terms.
public struct PullAnswer: Sendable, Hashable {
    public var cursor: String
    /// The answer begins the whole view: what the device holds is replaced.
    public var reset: Bool
    /// The answer stopped at its page size: pull again with `cursor` at once for the rest.
    public var more: Bool
    public var changes: ViewChanges
    public var serviceClock: HLCTimestamp
    public var lastAcceptedSeq: Int64
}

extension PullAnswer {
    /// The domain's reading of a pull's wire answer, whose views are the domain's own types.
    public init(_ answer: Components.Schemas.PullResponse) {
        var changes = ViewChanges()
        changes.upsertedShortcuts = answer.shortcuts.upserted
        changes.removedShortcuts = answer.shortcuts.removed
        changes.upsertedVoiceShortcuts = answer.voiceShortcuts.upserted
        changes.removedVoiceShortcuts = answer.voiceShortcuts.removed
        self.init(cursor: answer.cursor, reset: answer.reset, more: answer.more, changes: changes,
                  serviceClock: answer.hlc, lastAcceptedSeq: answer.lastAcceptedSeq)
    }
}

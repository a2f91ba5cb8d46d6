import Foundation

/// What one event did to one shortcut, or to a voice shortcut bound to it.
public enum ShortcutEffect: Sendable, Hashable, CustomStringConvertible {
    /// Its first uncovered donation: the shortcut exists.
    case created
    /// It existed before, every donation was covered, and now one is uncovered again.
    case broughtBack
    /// One more uncovered donation; the latest attributes did not change.
    case donatedAgain
    /// The latest attributes changed (the fields named).
    case attributesChanged([String])
    /// A deletion covered this many donations and the shortcut still exists.
    case donationsCovered(Int)
    /// A deletion covered every donation: the shortcut no longer exists.
    case deleted
    /// A donation older than a deletion of it: covered as it arrived.
    case coveredOnArrival
    /// The event selects the shortcut but changed nothing (e.g. a deletion older than every donation).
    case noChange
    case voiceShortcutAdded(id: UUID, phrase: String)
    case phraseChanged(id: UUID, from: String, to: String)
    case voiceShortcutDeleted(id: UUID)
    /// The voice shortcut's phrase is owned by another one.
    case phraseConflict(id: UUID, with: UUID)
    /// The voice shortcut owns its phrase again.
    case conflictResolved(id: UUID)

    /// A stable name for scripts.
    public var kind: String {
        switch self {
        case .created: "created"
        case .broughtBack: "broughtBack"
        case .donatedAgain: "donatedAgain"
        case .attributesChanged: "attributesChanged"
        case .donationsCovered: "donationsCovered"
        case .deleted: "deleted"
        case .coveredOnArrival: "coveredOnArrival"
        case .noChange: "noChange"
        case .voiceShortcutAdded: "voiceShortcutAdded"
        case .phraseChanged: "phraseChanged"
        case .voiceShortcutDeleted: "voiceShortcutDeleted"
        case .phraseConflict: "phraseConflict"
        case .conflictResolved: "conflictResolved"
        }
    }

    public var description: String {
        switch self {
        case .created: "created"
        case .broughtBack: "brought back"
        case .donatedAgain: "donated again"
        case .attributesChanged(let fields): "attributes changed: \(fields.joined(separator: ", "))"
        case .donationsCovered(let count): "covered \(count) donation\(count == 1 ? "" : "s")"
        case .deleted: "deleted (every donation covered)"
        case .coveredOnArrival: "covered on arrival (older than a deletion)"
        case .noChange: "no change"
        case .voiceShortcutAdded(let id, let phrase): "voice shortcut \(id.short) added: \"\(phrase)\""
        case .phraseChanged(let id, let from, let to): "voice shortcut \(id.short) phrase \"\(from)\" → \"\(to)\""
        case .voiceShortcutDeleted(let id): "voice shortcut \(id.short) deleted"
        case .phraseConflict(let id, let owner): "voice shortcut \(id.short): phrase conflict with \(owner.short)"
        case .conflictResolved(let id): "voice shortcut \(id.short): conflict resolved"
        }
    }
}

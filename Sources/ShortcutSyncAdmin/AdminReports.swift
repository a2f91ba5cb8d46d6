import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

/// What an `admin` command answers: a text for people and, encoded, JSON for scripts. The
/// JSON field names are the ones docs/operating.md documents; they only ever grow.
public protocol AdminReport: Encodable, Sendable {
    var text: String { get }
}

/// "1 event", "2 events".
func plural(_ count: Int, _ word: String) -> String {
    "\(count) \(word)\(count == 1 ? "" : "s")"
}

extension UUID {
    var lowercased: String { uuidString.lowercased() }
}

extension EventBody {
    /// One line saying what the event is about.
    public var summary: String {
        switch self {
        case .donation(let donation):
            "\(donation.bundleId)/\(donation.identifier) \"\(donation.title)\"" + (donation.groupIdentifier.map { " group \($0)" } ?? "")
        case .deletion(let deletion):
            switch deletion.selector {
            case .identifiers(let identifiers): "\(deletion.bundleId) identifiers \(identifiers.joined(separator: ", "))"
            case .groupIdentifier(let group): "\(deletion.bundleId) group \(group)"
            case .all: "\(deletion.bundleId) all"
            }
        case .voiceShortcutAdded(let added):
            "\(added.voiceShortcutId.short) \"\(added.phrase)\" → \(added.bundleId)/\(added.identifier)"
        case .voiceShortcutUpdated(let updated):
            "\(updated.voiceShortcutId.short) \"\(updated.phrase)\""
        case .voiceShortcutDeleted(let deleted):
            "\(deleted.voiceShortcutId.short)"
        case .appsReported(let report):
            "\(report.installed.count) app\(report.installed.count == 1 ? "" : "s")"
        case .signedOut:
            "signed out: what it taught the suggestions is forgotten"
        case .learningForgotten(let forgotten):
            "forget what \(forgotten.scope.described) taught the suggestions"
        case .learningPaused(let paused):
            "\(paused.paused ? "pause" : "resume") the suggestions' learning of \(paused.scope.described)"
        }
    }
}

extension LearningScope {
    /// The scope as an operator reads it: `the account`, `device 1a2b3c4d`, `app/identifier`, `place 3f`.
    var described: String {
        switch self {
        case .account: "the account"
        case .device(let id): "device \(id.short)"
        case .shortcut(let id): "\(id.bundleId)/\(id.identifier)"
        case .place(let slot): "place \(PlaceToken.prefix(ofSlot: slot))"
        }
    }
}

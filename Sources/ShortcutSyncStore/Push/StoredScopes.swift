import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// One account's deletion scopes as the columns of `projection_deletion_marks` (its account
/// is a statement's parameter of its own), and the forgets of shortcuts' learning kept beside
/// them (scope `forget`, `LearningRules`).
struct StoredScopes {
    var bundles: [String] = [], scopes: [String] = [], values: [String] = []

    mutating func append(_ scope: DeletionScope) {
        let (kind, value) = Self.columns(of: scope)
        bundles.append(scope.bundleId)
        scopes.append(kind)
        values.append(value)
    }

    mutating func append(forgotten shortcut: ShortcutID) {
        bundles.append(shortcut.bundleId)
        scopes.append(Self.forget)
        values.append(shortcut.identifier)
    }

    /// The `scope` of a shortcut's forget.
    static let forget = "forget"

    /// The `scope` and `value` columns of a mark.
    static func columns(of scope: DeletionScope) -> (scope: String, value: String) {
        switch scope {
        case .all: ("all", "")
        case .identifier(let shortcut): ("identifier", shortcut.identifier)
        case .group(_, let group): ("group", group)
        }
    }

    static func scope(bundleId: String, scope: String, value: String) throws -> DeletionScope {
        switch scope {
        case "all": return .all(bundleId: bundleId)
        case "identifier": return .identifier(ShortcutID(bundleId: bundleId, identifier: value))
        case "group": return .group(bundleId: bundleId, group: value)
        default: throw StoreError.corruptRow("unknown deletion scope \(scope)")
        }
    }
}

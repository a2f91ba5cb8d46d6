import Foundation

/// What one deletion selects, and what remembers its newest key: a deletion covers every
/// older donation it selects, so per selector only the newest key matters.
public enum DeletionScope: Sendable, Hashable, CustomStringConvertible {
    case all(bundleId: String)
    case identifier(ShortcutID)
    case group(bundleId: String, group: String)

    public var bundleId: String {
        switch self {
        case .all(let bundleId), .group(let bundleId, _): bundleId
        case .identifier(let id): id.bundleId
        }
    }

    /// Whether this scope selects the donations of `id`.
    public func selects(_ id: DonationGroupID) -> Bool {
        switch self {
        case .all(let bundleId): id.shortcut.bundleId == bundleId
        case .identifier(let shortcut): id.shortcut == shortcut
        case .group(let bundleId, let group): id.shortcut.bundleId == bundleId && id.group == group
        }
    }

    /// The scopes whose deletions select a donation group.
    public static func selecting(_ id: DonationGroupID) -> [DeletionScope] {
        var scopes: [DeletionScope] = [.all(bundleId: id.shortcut.bundleId), .identifier(id.shortcut)]
        if !id.group.isEmpty { scopes.append(.group(bundleId: id.shortcut.bundleId, group: id.group)) }
        return scopes
    }

    /// The scopes one deletion raises.
    public static func raised(by deletion: Deletion) -> [DeletionScope] {
        switch deletion.selector {
        case .identifiers(let identifiers):
            identifiers.map { .identifier(ShortcutID(bundleId: deletion.bundleId, identifier: $0)) }
        case .groupIdentifier(let group):
            [.group(bundleId: deletion.bundleId, group: group)]
        case .all:
            [.all(bundleId: deletion.bundleId)]
        }
    }

    public var description: String {
        switch self {
        case .all(let bundleId): "all of \(bundleId)"
        case .identifier(let id): "\(id)"
        case .group(let bundleId, let group): "group \(group) of \(bundleId)"
        }
    }
}

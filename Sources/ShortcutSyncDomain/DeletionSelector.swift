import Foundation

/// Which donations of one app a deletion selects.
public enum DeletionSelector: Sendable, Hashable {
    case identifiers([String])
    case groupIdentifier(String)
    case all
}

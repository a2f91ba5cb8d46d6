import Foundation

/// An app's request to forget donations: by identifiers, by group, or all of the app's.
public struct Deletion: Sendable, Hashable, Codable {
    public var bundleId: String
    public var selector: DeletionSelector

    public init(bundleId: String, selector: DeletionSelector) {
        self.bundleId = bundleId
        self.selector = selector
    }

    enum CodingKeys: String, CodingKey {
        case bundleId, identifiers, groupIdentifier, all
    }

    static let allMustBeTrue = "must be true when given; to delete selected donations give identifiers or groupIdentifier"
    static let exactlyOneSelector = "a deletion needs exactly one of identifiers, groupIdentifier or all: true"

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        bundleId = try c.decode(String.self, forKey: .bundleId)
        let identifiers = try c.decodeIfPresent([String].self, forKey: .identifiers)
        let group = try c.decodeIfPresent(String.self, forKey: .groupIdentifier)
        let all = try c.decodeIfPresent(Bool.self, forKey: .all)
        switch (identifiers, group, all) {
        case (let identifiers?, nil, nil):
            selector = .identifiers(identifiers)
        case (nil, let group?, nil):
            selector = .groupIdentifier(group)
        case (nil, nil, true):
            selector = .all
        case (nil, nil, false):
            throw DecodingError.dataCorrupted(.init(
                codingPath: c.codingPath + [CodingKeys.all], debugDescription: Self.allMustBeTrue))
        default:
            throw DecodingError.dataCorrupted(.init(
                codingPath: c.codingPath, debugDescription: Self.exactlyOneSelector))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(bundleId, forKey: .bundleId)
        switch selector {
        case .identifiers(let identifiers): try c.encode(identifiers, forKey: .identifiers)
        case .groupIdentifier(let group): try c.encode(group, forKey: .groupIdentifier)
        case .all: try c.encode(true, forKey: .all)
        }
    }
}

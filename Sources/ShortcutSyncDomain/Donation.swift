import Foundation

/// "The user just did this": an `INInteraction.donate` or an `NSUserActivity` eligible for prediction.
public struct Donation: Sendable, Hashable, Codable {
    public var bundleId: String
    public var identifier: String
    public var kind: DonationKind
    public var activityType: String?
    public var intentType: String?
    public var title: String
    public var subtitle: String?
    public var groupIdentifier: String?
    public var suggestedInvocationPhrase: String?
    public var keywords: [String]
    public var eligibleForSearch: Bool
    public var eligibleForPrediction: Bool
    public var parameters: [String: JSONValue]
    /// The device's offset from UTC when the person did it (−720…840 minutes); nil counts as 0.
    /// It places the donation in the person's local week for suggestions (DESIGN §3).
    public var utcOffsetMinutes: Int?
    /// Where the person did it, as a token of the person's own (`PlaceToken`); nil when the
    /// device holds no place key or the app gave no place. Like the offset, it is the
    /// suggestions' to know (DESIGN §3), not the view's.
    public var place: String?

    public init(
        bundleId: String, identifier: String, kind: DonationKind,
        activityType: String? = nil, intentType: String? = nil,
        title: String, subtitle: String? = nil, groupIdentifier: String? = nil,
        suggestedInvocationPhrase: String? = nil, keywords: [String] = [],
        eligibleForSearch: Bool = false, eligibleForPrediction: Bool = true,
        parameters: [String: JSONValue] = [:], utcOffsetMinutes: Int? = nil, place: String? = nil
    ) {
        self.bundleId = bundleId
        self.identifier = identifier
        self.kind = kind
        self.activityType = activityType
        self.intentType = intentType
        self.title = title
        self.subtitle = subtitle
        self.groupIdentifier = groupIdentifier
        self.suggestedInvocationPhrase = suggestedInvocationPhrase
        self.keywords = keywords
        self.eligibleForSearch = eligibleForSearch
        self.eligibleForPrediction = eligibleForPrediction
        self.parameters = parameters
        self.utcOffsetMinutes = utcOffsetMinutes
        self.place = place
    }

    /// The fields in the order every reader checks them and every writer writes them
    /// (`visitFields` declares them).
    public static let fields: [DonationField] = {
        var list = DonationFieldList()
        visitFields(&list)
        return list.fields
    }()

    /// Shows `visitor` each field, in the order every reader checks them and every writer writes
    /// them (DESIGN §2): the one declaration of a donation's fields. Adding a field: a property
    /// (and its `init` parameter) above, a line here, and its schema in `openapi.yaml`
    /// (`DonationFieldTests` fails until the two agree).
    @inline(__always)  // so that each visit's shape and access are known where it is used
    static func visitFields<Visitor: DonationFieldVisitor>(_ visitor: inout Visitor) {
        visitor.bundleId("bundleId", Access(\.bundleId, { $0.bundleId = $1 }))
        visitor.text("identifier", Access(\.identifier, { $0.identifier = $1 }), length: Limits.identifierLength)
        visitor.kind("kind", Access(\.kind, { $0.kind = $1 }))
        visitor.optionalText("activityType", Access(\.activityType, { $0.activityType = $1 }),
                             length: Limits.identifierLength, requiredFor: .userActivity)
        visitor.optionalText("intentType", Access(\.intentType, { $0.intentType = $1 }),
                             length: Limits.identifierLength, requiredFor: .intent)
        visitor.text(Label("title", inView: true, readByPeople: true), Access(\.title, { $0.title = $1 }), length: Limits.titleLength)
        visitor.optionalText(Label("subtitle", inView: true, readByPeople: true), Access(\.subtitle, { $0.subtitle = $1 }),
                             length: Limits.titleLength, requiredFor: nil)
        visitor.optionalText("groupIdentifier", Access(\.groupIdentifier, { $0.groupIdentifier = $1 }),
                             length: Limits.identifierLength, requiredFor: nil)
        visitor.phrase("suggestedInvocationPhrase", Access(\.suggestedInvocationPhrase, { $0.suggestedInvocationPhrase = $1 }))
        visitor.texts("keywords", Access(\.keywords, { $0.keywords = $1 }), maxCount: Limits.maxKeywords, length: Limits.keywordLength)
        visitor.flag("eligibleForSearch", Access(\.eligibleForSearch, { $0.eligibleForSearch = $1 }), absent: false)
        visitor.flag("eligibleForPrediction", Access(\.eligibleForPrediction, { $0.eligibleForPrediction = $1 }), absent: true)
        visitor.object("parameters", Access(\.parameters, { $0.parameters = $1 }), maxBytes: Limits.maxParametersBytes)
        // When the person donated is the suggestions' to know (DESIGN §3), not a shortcut's attribute.
        visitor.integer(DonationField.Label("utcOffsetMinutes", inView: false), Access(\.utcOffsetMinutes, { $0.utcOffsetMinutes = $1 }),
                        range: Limits.utcOffsetMinutes, meaning: "an offset from UTC", unit: "minutes")
        visitor.place(DonationField.Label("place", inView: false), Access(\.place, { $0.place = $1 }))
    }

    /// What the readers fill in field by field; nothing of it is left once every field is read.
    static var unread: Donation { Donation(bundleId: "", identifier: "", kind: .intent, title: "") }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DonationField.Key.self)
        self = .unread
        for field in Self.fields {
            try field.decode(into: &self, from: container)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: DonationField.Key.self)
        for field in Self.fields {
            try field.encode(self, to: &container)
        }
    }
}

/// How `visitFields` names each field's place in a `Donation`.
private typealias Access<Value> = DonationField.Access<Value>
/// How `visitFields` names a field that is not just its name.
private typealias Label = DonationField.Label

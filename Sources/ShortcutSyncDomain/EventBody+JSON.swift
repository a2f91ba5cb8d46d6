import Foundation

extension EventBody {
    /// The body's own fields as a JSON object, the same fields `encodeFields(to:)` writes (a
    /// property test holds them equal), written directly: this is how every pushed event is
    /// stored, and Foundation's `JSONEncoder` cost 14 % of the service's CPU in a profile of
    /// `bench push`.
    public var fieldsJSON: String {
        var json = JSONText()
        switch self {
        case .donation(let donation):
            json.field("bundleId", donation.bundleId)
            json.field("identifier", donation.identifier)
            json.field("kind", donation.kind.rawValue)
            json.field("activityType", donation.activityType)
            json.field("intentType", donation.intentType)
            json.field("title", donation.title)
            json.field("subtitle", donation.subtitle)
            json.field("groupIdentifier", donation.groupIdentifier)
            json.field("suggestedInvocationPhrase", donation.suggestedInvocationPhrase)
            json.field("keywords", donation.keywords)
            json.field("eligibleForSearch", donation.eligibleForSearch)
            json.field("eligibleForPrediction", donation.eligibleForPrediction)
            json.key("parameters")
            json.value(.object(donation.parameters))
        case .deletion(let deletion):
            json.field("bundleId", deletion.bundleId)
            switch deletion.selector {
            case .identifiers(let identifiers): json.field("identifiers", identifiers)
            case .groupIdentifier(let group): json.field("groupIdentifier", group)
            case .all: json.field("all", true)
            }
        case .voiceShortcutAdded(let added):
            json.field("voiceShortcutId", added.voiceShortcutId.uuidString)
            json.field("phrase", added.phrase)
            json.field("bundleId", added.bundleId)
            json.field("identifier", added.identifier)
            json.field("title", added.title)
        case .voiceShortcutUpdated(let updated):
            json.field("voiceShortcutId", updated.voiceShortcutId.uuidString)
            json.field("phrase", updated.phrase)
        case .voiceShortcutDeleted(let deleted):
            json.field("voiceShortcutId", deleted.voiceShortcutId.uuidString)
        case .appsReported(let report):
            json.field("installed", report.installed)
        }
        return json.object
    }
}

/// A JSON object written field by field.
struct JSONText {
    private var text = "{"
    private var first = true

    var object: String { text + "}" }

    mutating func key(_ name: String) {
        if !first { text += "," }
        first = false
        string(name)
        text += ":"
    }

    mutating func field(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    mutating func field(_ name: String, _ value: Bool) {
        key(name)
        text += value ? "true" : "false"
    }

    mutating func field(_ name: String, _ values: [String]) {
        key(name)
        text += "["
        for (index, value) in values.enumerated() {
            if index > 0 { text += "," }
            string(value)
        }
        text += "]"
    }

    mutating func value(_ value: JSONValue) {
        switch value {
        case .null: text += "null"
        case .bool(let flag): text += flag ? "true" : "false"
        case .number(let number): text += Self.number(number)
        case .string(let string): self.string(string)
        case .array(let values):
            text += "["
            for (index, element) in values.enumerated() {
                if index > 0 { text += "," }
                self.value(element)
            }
            text += "]"
        case .object(let members):
            text += "{"
            for (index, (name, element)) in members.enumerated() {
                if index > 0 { text += "," }
                string(name)
                text += ":"
                self.value(element)
            }
            text += "}"
        }
    }

    /// An integral number without a fraction, any other in Swift's shortest form that reads back
    /// the same (JSON has no NaN or infinity; `JSONValue` never holds them).
    static func number(_ value: Double) -> String {
        if value.rounded() == value, abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    private mutating func string(_ value: String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                text += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}

import Foundation
import ShortcutSyncDomain
import Testing

/// One event shape (issue 32): each pushed type's fields are the same in the API's document
/// (`openapi.yaml`), in the body the service stores (`fieldsJSON`), in the push's reader
/// (`PushJSON`) and in the domain's `Codable` conformance. A field added to one and not the others
/// fails here, by name.
@Suite struct EventShapeTests {
    /// A donation with every field set (both of a donation's types, every optional), none to its default.
    static let everyDonationField = Donation(
        bundleId: "com.example.soup", identifier: "order", kind: .intent, activityType: "com.example.open",
        intentType: "OrderSoupIntent", title: "Order soup", subtitle: "Tomato", groupIdentifier: "soups",
        suggestedInvocationPhrase: "Soup time", keywords: ["soup"], eligibleForSearch: true, eligibleForPrediction: false,
        parameters: ["size": .string("large")], utcOffsetMinutes: 60,
        place: "3fa95c0e8d1b4a7f9e2c6b5d0a1f8e3c")

    /// Every pushed type with every field set.
    static let samples: [EventBody] = [
        .donation(everyDonationField),
        .deletion(Deletion(bundleId: "com.example.soup", selector: .identifiers(["order"]))),
        .deletion(Deletion(bundleId: "com.example.soup", selector: .groupIdentifier("soups"))),
        .deletion(Deletion(bundleId: "com.example.soup", selector: .all)),
        .voiceShortcutAdded(VoiceShortcutAdded(voiceShortcutId: UUID(), phrase: "Soup time", bundleId: "com.example.soup",
                                               identifier: "order", title: "Order soup")),
        .voiceShortcutUpdated(VoiceShortcutUpdated(voiceShortcutId: UUID(), phrase: "Soup now")),
        .voiceShortcutDeleted(VoiceShortcutDeleted(voiceShortcutId: UUID())),
        .appsReported(AppsReported(installed: ["com.example.soup"])),
        .learningForgotten(LearningForgotten(scope: .account)),
        .learningForgotten(LearningForgotten(scope: .device(UUID()))),
        .learningForgotten(LearningForgotten(scope: .shortcut(ShortcutID(bundleId: "com.example.soup", identifier: "order")))),
        .learningForgotten(LearningForgotten(scope: .place(0x3f))),
        .learningPaused(LearningPaused(scope: .account, paused: true)),
        .learningPaused(LearningPaused(scope: .device(UUID()), paused: false)),
    ]

    /// The property names of each `…Fields` schema of `openapi.yaml`, read from its text (each
    /// schema's `properties:` block, one property a line, as the document is written).
    static func specFields() throws -> [String: Set<String>] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/ShortcutSyncAPI/openapi.yaml")
        var fields: [String: Set<String>] = [:]
        var schema: String?
        var inProperties = false
        for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false) {
            let indent = line.prefix { $0 == " " }.count
            let text = line.trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty, !text.hasPrefix("#") else { continue }
            if indent == 4, text.hasSuffix("Fields:") {
                schema = String(text.dropLast())
                inProperties = false
            } else if indent <= 4 {
                schema = nil
            } else if let schema, indent == 6 {
                inProperties = text == "properties:"
                if inProperties { fields[schema, default: []] = [] }
            } else if let schema, inProperties, indent == 8, let name = text.split(separator: ":").first {
                fields[schema, default: []].insert(String(name))
            }
        }
        return fields
    }

    /// The keys a body's stored JSON has.
    static func storedKeys(_ body: EventBody) throws -> Set<String> {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body.fieldsJSON.utf8)) as? [String: Any])
        return Set(object.keys)
    }

    @Test func eachPushedTypesFieldsAreTheSameInTheSpecTheStoreTheReaderAndTheDomain() throws {
        let spec = try Self.specFields()
        let pushed = EventType.allCases.filter(\.isPushed)
        #expect(Set(Self.samples.map(\.type)) == Set(pushed), "a sample of every pushed type")
        for type in pushed {
            let schema = type.rawValue.prefix(1).uppercased() + type.rawValue.dropFirst() + "Fields"
            let specified = try #require(spec[schema], "openapi.yaml has no \(schema)")
            let stored = try Self.samples.filter { $0.type == type }.reduce(into: Set<String>()) { $0.formUnion(try Self.storedKeys($1)) }
            #expect(stored == specified, "\(type): stored \(stored.sorted()), specified \(specified.sorted())")
        }
        for body in Self.samples {
            // Every stored property of a struct body is set in its sample and stored under its name
            // (a deletion's selector and a learning event's scope are several fields, one set).
            switch body {
            case .deletion, .learningForgotten, .learningPaused: break
            default:
                let properties = Mirror(reflecting: Mirror(reflecting: body).children.first!.value).children
                let unset = properties.filter { child in
                    let value = Mirror(reflecting: child.value)
                    return value.displayStyle == .optional && value.children.isEmpty
                }.compactMap(\.label)
                #expect(unset.isEmpty, "\(body.type): the sample leaves \(unset) unset")
                #expect(Set(properties.compactMap(\.label)) == (try Self.storedKeys(body)), "\(body.type): properties and stored keys")
            }
            // The push's reader and the domain's decoder read back exactly what is stored.
            let event = Event(seq: 1, hlc: HLCTimestamp(wallMillis: 1), body: body)
            let json = #"{"events":[{"id":"\#(event.id.uuidString)","seq":1,"hlc":{"wallMillis":1,"counter":0},"type":"\#(body.type.rawValue)","#
                + body.fieldsJSON.dropFirst() + "]}"
            #expect(try PushJSON.events(in: Array(json.utf8)) == [event], "\(body.type): PushJSON")
            struct Body: Decodable { var events: [Event] }
            #expect(try JSONDecoder().decode(Body.self, from: Data(json.utf8)).events == [event], "\(body.type): Decodable")
        }
    }
}

import Foundation
import ShortcutSyncDomain
import Testing
import Yams

/// `Donation.fields`, the one declaration of a donation's fields that the push's reader, the
/// stored body, the validator, `Codable` and the view derive from, says what `openapi.yaml` says
/// of them (names, which are required, limits, defaults), and each of its lines reads and writes
/// the property it is named for. A field added to one side only fails here, by name.
@Suite struct DonationFieldTests {
    /// `openapi.yaml`'s schemas, as Yams reads them.
    static func schemas() throws -> [String: Any] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/ShortcutSyncAPI/openapi.yaml")
        let document = try #require(try Yams.load(yaml: String(contentsOf: url, encoding: .utf8)) as? [String: Any])
        let components = try #require(document["components"] as? [String: Any])
        return try #require(components["schemas"] as? [String: Any])
    }

    /// A property's schema with a `$ref` to a named schema replaced by that schema.
    static func resolved(_ schema: Any?, in schemas: [String: Any]) throws -> [String: Any] {
        let schema = try #require(schema as? [String: Any])
        guard let reference = schema["$ref"] as? String else { return schema }
        let name = try #require(reference.split(separator: "/").last.map(String.init))
        return try #require(schemas[name] as? [String: Any], "\(reference) is not a schema")
    }

    /// The limits a text field's schema must state: its length, and the pattern of a text that is
    /// not blank and holds no U+0000 (a bundle id's and a phrase's patterns are their own).
    static func expectText(_ schema: [String: Any], _ length: ClosedRange<Int>, pattern: String? = BlankText.pattern,
                           _ name: String) {
        #expect(schema["type"] as? String == "string", "\(name): type")
        #expect(schema["minLength"] as? Int == length.lowerBound, "\(name): minLength")
        #expect(schema["maxLength"] as? Int == length.upperBound, "\(name): maxLength")
        if let pattern {
            #expect(schema["pattern"] as? String == pattern, "\(name): pattern")
        }
    }

    @Test func theDeclarationSaysWhatOpenAPIsDonationFieldsSay() throws {
        let schemas = try Self.schemas()
        let spec = try #require(schemas["DonationFields"] as? [String: Any])
        let properties = try #require(spec["properties"] as? [String: Any])
        #expect(Set(properties.keys) == Set(Donation.fields.map(\.name)), "names")

        // Required always, or for one kind: `if kind is intent then … else …`.
        let required = Set(try #require(spec["required"] as? [String]))
        let condition = (((spec["if"] as? [String: Any])?["properties"] as? [String: Any])?["kind"] as? [String: Any])?["const"] as? String
        let conditionKind = try #require(condition.flatMap { DonationKind(rawValue: $0) }, "DonationFields' if names a kind")
        let then = Set((spec["then"] as? [String: Any])?["required"] as? [String] ?? [])
        let otherwise = Set((spec["else"] as? [String: Any])?["required"] as? [String] ?? [])
        for field in Donation.fields {
            let name = field.name
            switch field.presence {
            case .required:
                #expect(required.contains(name) && !then.contains(name) && !otherwise.contains(name), "\(name) is required")
            case .requiredFor(let kind):
                #expect(!required.contains(name), "\(name) is required only of kind \(kind)")
                #expect((kind == conditionKind ? then : otherwise).contains(name), "\(name) is required of kind \(kind)")
            case .optional:
                #expect(!required.contains(name) && !then.contains(name) && !otherwise.contains(name), "\(name) is optional")
            }
        }
        let requiredForAKind = Donation.fields.filter { if case .requiredFor = $0.presence { true } else { false } }
        #expect(then.union(otherwise) == Set(requiredForAKind.map(\.name)), "the fields required of one kind")

        for field in Donation.fields {
            let name = field.name
            let schema = try Self.resolved(properties[name], in: schemas)
            switch field.shape {
            case .bundleId:
                Self.expectText(schema, Limits.bundleIdLength, pattern: nil, name)
                #expect(schema["pattern"] as? String == #"^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$"#, "\(name): pattern")
            case .text(_, let length), .optionalText(_, let length, _):
                Self.expectText(schema, length, pattern: field.readByPeople ? ControlCharacters.textPattern : BlankText.pattern, name)
            case .phrase:
                Self.expectText(schema, Limits.phraseLength, pattern: nil, name)
            case .kind:
                #expect(schema["enum"] as? [String] == DonationKind.allCases.map(\.rawValue), "\(name): enum")
            case .texts(_, let maxCount, let length):
                #expect(schema["type"] as? String == "array", "\(name): type")
                #expect(schema["maxItems"] as? Int == maxCount, "\(name): maxItems")
                Self.expectText(try Self.resolved(schema["items"], in: schemas), length, "\(name): items")
            case .flag(_, let absent):
                #expect(schema["type"] as? String == "boolean", "\(name): type")
                #expect(schema["default"] as? Bool == absent, "\(name): default")
            case .object(_, let maxBytes):
                #expect(schema["type"] as? String == "object", "\(name): type")
                #expect((schema["description"] as? String)?.contains("\(maxBytes / 1024) KiB") == true, "\(name): its size in the description")
            case .integer(_, let range, _, _):
                #expect(schema["type"] as? String == "integer", "\(name): type")
                #expect(schema["minimum"] as? Int == range.lowerBound, "\(name): minimum")
                #expect(schema["maximum"] as? Int == range.upperBound, "\(name): maximum")
            case .place:
                #expect(schema["type"] as? String == "string", "\(name): type")
                #expect(schema["pattern"] as? String == PlaceToken.pattern, "\(name): pattern")
            }
        }
    }

    /// A view is its donation's fields that it shows, with its two counts beside them: the JSON
    /// of `ShortcutView`, which `openapi.yaml` composes of `DonationFields` and those two.
    @Test func aViewIsTheFieldsItShowsAndItsCounts() throws {
        let view = ShortcutView(latest: EventShapeTests.everyDonationField, donationCount: 2, lastDonatedAt: HLCTimestamp(wallMillis: 1))
        let object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(view)) as? [String: Any])
        #expect(Set(object.keys) == Set(Donation.fields.filter(\.inView).map(\.name) + ["donationCount", "lastDonatedAt"]))
        #expect(try JSONDecoder().decode(ShortcutView.self, from: JSONEncoder().encode(view)) == view)

        let spec = try #require(try Self.schemas()["ShortcutView"] as? [String: Any])
        let parts = try #require(spec["allOf"] as? [[String: Any]])
        #expect(parts.contains { $0["$ref"] as? String == "#/components/schemas/DonationFields" })
    }

    /// Each line of the declaration reads and writes the property it is named for, and every
    /// stored property of `Donation` has a line.
    @Test func eachLineKeepsThePropertyItIsNamedFor() throws {
        let sample = EventShapeTests.everyDonationField
        let properties = Mirror(reflecting: sample).children.compactMap(\.label)
        #expect(properties == Donation.fields.map(\.name), "every property, in the declaration's order")
        for field in Donation.fields {
            var changed = sample
            switch field.shape {
            case .bundleId(let access), .text(let access, _):
                access.set(&changed, "changed")
                #expect(access.get(changed) == "changed")
            case .optionalText(let access, _, _), .phrase(let access):
                access.set(&changed, "changed")
                #expect(access.get(changed) == "changed")
            case .kind(let access):
                access.set(&changed, access.get(sample) == .intent ? .userActivity : .intent)
                #expect(access.get(changed) != access.get(sample))
            case .texts(let access, _, _):
                access.set(&changed, ["changed"])
                #expect(access.get(changed) == ["changed"])
            case .flag(let access, _):
                access.set(&changed, !access.get(sample))
                #expect(access.get(changed) != access.get(sample))
            case .object(let access, _):
                access.set(&changed, ["changed": .null])
                #expect(access.get(changed) == ["changed": .null])
            case .integer(let access, _, _, _):
                access.set(&changed, 7)
                #expect(access.get(changed) == 7)
            case .place(let access):
                access.set(&changed, String(repeating: "e", count: PlaceToken.length))
                #expect(access.get(changed) == String(repeating: "e", count: PlaceToken.length))
            }
            let differing = zip(Mirror(reflecting: sample).children, Mirror(reflecting: changed).children)
                .filter { "\($0.value)" != "\($1.value)" }.compactMap(\.0.label)
            #expect(differing == [field.name], "the line named \(field.name) changed \(differing)")
        }
    }
}

import Foundation

/// Reads a push body, `{"events": [...]}`, into domain events straight from its bytes.
///
/// It says what `JSONDecoder` with the domain's `Decodable` conformances says, about valid and
/// invalid bodies alike: the same events, or the same `DecodingError` (kind, coding path and
/// type), checked in the same order. `PushJSONTests` holds the two equal on random histories
/// and on bodies broken in every field. It exists for speed: see `JSONNode`.
public enum PushJSON {
    /// The events of a push body, or the `DecodingError` that `JSONDecoder` would throw for it.
    public static func events(in bytes: UnsafeRawBufferPointer) throws(DecodingError) -> [Event] {
        let document: JSONNode
        do {
            document = try JSONParser.parse(bytes)
        } catch {
            throw .dataCorrupted(.init(codingPath: [], debugDescription: "The given data was not valid JSON.", underlyingError: error))
        }
        let body = try Fields(document, path: [])
        let elements = try body.required("events") { node, path throws(DecodingError) in try list(node, path: path) }
        var events: [Event] = []
        events.reserveCapacity(elements.count)
        for (index, node) in elements.enumerated() {
            events.append(try event(node, path: body.path + [JSONKey("events"), JSONKey(index)]))
        }
        return events
    }

    public static func events(in bytes: [UInt8]) throws(DecodingError) -> [Event] {
        let result = bytes.withUnsafeBytes { buffer in Result { () throws(DecodingError) -> [Event] in try events(in: buffer) } }
        return try result.get()
    }

    static func event(_ node: JSONNode, path: [JSONKey]) throws(DecodingError) -> Event {
        let fields = try Fields(node, path: path)
        let id = try fields.required("id", uuid)
        let seq = try fields.required("seq") { node, path throws(DecodingError) in try integer(node, path: path, as: Int64.self) }
        let hlc = try fields.required("hlc") { node, path throws(DecodingError) -> HLCTimestamp in
            let clock = try Fields(node, path: path())
            return HLCTimestamp(
                wallMillis: try clock.required("wallMillis") { node, path throws(DecodingError) in try integer(node, path: path, as: Int64.self) },
                counter: try clock.required("counter") { node, path throws(DecodingError) in try integer(node, path: path, as: Int.self) })
        }
        let type = try fields.required("type") { node, path throws(DecodingError) -> EventType in
            let type = try rawValue(node, path: path, as: EventType.self)
            guard type.isPushed else { throw .dataCorrupted(context(path(), "\(type.rawValue) is written by the service; a device cannot push it")) }
            return type
        }
        return Event(id: id, seq: seq, hlc: hlc, body: try body(type, fields))
    }

    private static func body(_ type: EventType, _ fields: Fields) throws(DecodingError) -> EventBody {
        switch type {
        case .donation:
            return .donation(try donation(fields))
        case .deletion:
            let bundleId = try fields.required("bundleId", string)
            let identifiers = try fields.optional("identifiers", strings)
            let group = try fields.optional("groupIdentifier", string)
            let all = try fields.optional("all", bool)
            let selector: DeletionSelector
            switch (identifiers, group, all) {
            case (let identifiers?, nil, nil): selector = .identifiers(identifiers)
            case (nil, let group?, nil): selector = .groupIdentifier(group)
            case (nil, nil, true): selector = .all
            case (nil, nil, false):
                throw .dataCorrupted(.init(codingPath: fields.path + [JSONKey("all")], debugDescription: Deletion.allMustBeTrue))
            default:
                throw .dataCorrupted(.init(codingPath: fields.path, debugDescription: Deletion.exactlyOneSelector))
            }
            return .deletion(Deletion(bundleId: bundleId, selector: selector))
        case .voiceShortcutAdded:
            return .voiceShortcutAdded(VoiceShortcutAdded(
                voiceShortcutId: try fields.required("voiceShortcutId", uuid),
                phrase: try fields.required("phrase", string),
                bundleId: try fields.required("bundleId", string),
                identifier: try fields.required("identifier", string),
                title: try fields.required("title", string)))
        case .voiceShortcutUpdated:
            return .voiceShortcutUpdated(VoiceShortcutUpdated(
                voiceShortcutId: try fields.required("voiceShortcutId", uuid),
                phrase: try fields.required("phrase", string)))
        case .voiceShortcutDeleted:
            return .voiceShortcutDeleted(VoiceShortcutDeleted(voiceShortcutId: try fields.required("voiceShortcutId", uuid)))
        case .appsReported:
            return .appsReported(AppsReported(installed: try fields.required("installed", strings)))
        case .deviceSignedOut:
            return .signedOut
        case .learningForgotten:
            return .learningForgotten(LearningForgotten(scope: try learningScope(fields)))
        case .learningPaused:
            let scope = try learningScope(fields)
            if case .shortcut = scope {
                throw .dataCorrupted(.init(codingPath: fields.path, debugDescription: LearningPaused.accountOrDevice))
            }
            return .learningPaused(LearningPaused(scope: scope, paused: try fields.required("paused", requiredBool)))
        }
    }

    /// A learning event's `scope` and the fields it needs, read as `LearningScope`'s decoder reads them.
    private static func learningScope(_ fields: Fields) throws(DecodingError) -> LearningScope {
        let name = try fields.required("scope", string)
        let scope = LearningScope(name: name, deviceId: try fields.optional("deviceId", uuid),
                                  bundleId: try fields.optional("bundleId", string), identifier: try fields.optional("identifier", string))
        guard let scope else {
            let fault = LearningScope.fault(ofScope: name)
            throw .dataCorrupted(.init(codingPath: fields.path + (fault.atScope ? [JSONKey("scope")] : []), debugDescription: fault.detail))
        }
        return scope
    }

    /// A donation's fields, read as `Donation.visitFields` declares them.
    private static func donation(_ fields: Fields) throws(DecodingError) -> Donation {
        var reader = DonationReader(fields: fields)
        Donation.visitFields(&reader)
        if let failure = reader.failure { throw failure }
        return reader.donation
    }

    // MARK: Values, with the errors JSONDecoder gives for them

    /// Where a value is, built only for an error: an array made for each field read cost the
    /// reader about 7 % of its instructions (a push's values are almost always well formed).
    typealias Path = () -> [JSONKey]

    private static func context(_ path: [JSONKey], _ description: String) -> DecodingError.Context {
        .init(codingPath: path, debugDescription: description)
    }

    private static func mismatch(_ type: Any.Type, _ node: JSONNode, _ path: [JSONKey]) -> DecodingError {
        if case .null = node {
            return .valueNotFound(type, context(path, "Cannot get value of type \(type) -- found null value instead"))
        }
        return .typeMismatch(type, context(path, "Expected to decode \(type) but found \(node.kindName) instead."))
    }

    static func string(_ node: JSONNode, path: Path) throws(DecodingError) -> String {
        guard case .string(let value) = node else { throw mismatch(String.self, node, path()) }
        return value
    }

    static func bool(_ node: JSONNode, path: Path) throws(DecodingError) -> Bool {
        guard case .bool(let value) = node else { throw mismatch(Bool.self, node, path()) }
        return value
    }

    /// A required boolean: JSONDecoder calls a null one a type mismatch, unlike other null values.
    static func requiredBool(_ node: JSONNode, path: Path) throws(DecodingError) -> Bool {
        if case .null = node { throw .typeMismatch(Bool.self, context(path(), "Expected to decode Bool but found null instead.")) }
        return try bool(node, path: path)
    }

    /// Read in the canonical form only (`UUID(canonical:)`); the message is JSONDecoder's.
    static func uuid(_ node: JSONNode, path: Path) throws(DecodingError) -> UUID {
        guard let value = UUID(canonical: try string(node, path: path)) else {
            throw .dataCorrupted(context(path(), invalidUUID))
        }
        return value
    }

    /// What a UUID that is not one is called (JSONDecoder's words).
    public static let invalidUUID = "Attempted to decode UUID from invalid UUID string."

    static func integer<Integer: FixedWidthInteger>(_ node: JSONNode, path: Path, as type: Integer.Type) throws(DecodingError) -> Integer {
        guard case .number(let text) = node else { throw mismatch(type, node, path()) }
        if let value = Integer(text) { return value }
        // A number written with a fraction or an exponent is taken when it is exactly an integer in range.
        if let double = Double(text), double.rounded() == double, let value = Integer(exactly: double) { return value }
        throw .dataCorrupted(context(path(), "Number \(text) is not representable in Swift."))
    }

    static func rawValue<Value: RawRepresentable<String>>(_ node: JSONNode, path: Path, as type: Value.Type) throws(DecodingError) -> Value {
        let text = try string(node, path: path)
        guard let value = Value(rawValue: text) else {
            throw .dataCorrupted(context(path(), "Cannot initialize \(type) from invalid String value \(text)"))
        }
        return value
    }

    static func list(_ node: JSONNode, path: Path) throws(DecodingError) -> [JSONNode] {
        guard case .array(let elements) = node else { throw mismatch([Any].self, node, path()) }
        return elements
    }

    static func strings(_ node: JSONNode, path: Path) throws(DecodingError) -> [String] {
        let elements = try list(node, path: path)
        var values: [String] = []
        values.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            guard case .string(let value) = element else { throw mismatch(String.self, element, path() + [JSONKey(index)]) }
            values.append(value)
        }
        return values
    }

    static func parameters(_ node: JSONNode, path: Path) throws(DecodingError) -> [String: JSONValue] {
        guard case .object(let members) = node else { throw mismatch([String: Any].self, node, path()) }
        var values: [String: JSONValue] = [:]
        values.reserveCapacity(members.count)
        for member in members {
            let key = member.key
            values[key] = try value(member.value, path: { path() + [JSONKey(key)] })
        }
        return values
    }

    static func value(_ node: JSONNode, path: Path) throws(DecodingError) -> JSONValue {
        switch node {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .number(let text):
            guard let number = Double(text), number.isFinite else {
                throw .dataCorrupted(context(path(), "Number \(text) is not representable in Swift."))
            }
            return .number(number)
        case .string(let text): return .string(text)
        case .array(let elements):
            var values: [JSONValue] = []
            values.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() { values.append(try value(element, path: { path() + [JSONKey(index)] })) }
            return .array(values)
        case .object: return .object(try parameters(node, path: path))
        }
    }

    /// An object's members at a path, read by name as a keyed container reads them.
    struct Fields {
        let members: [JSONMember]
        let path: [JSONKey]

        init(_ node: JSONNode, path: [JSONKey]) throws(DecodingError) {
            guard case .object(let members) = node else { throw mismatch([String: Any].self, node, path) }
            self.members = members
            self.path = path
        }

        /// Lengths are compared first: most members are not the one looked for, and a length is
        /// read without a call.
        private func node(_ key: String) -> JSONNode? {
            let length = key.utf8.count
            return members.last { $0.key.utf8.count == length && $0.key == key }?.value
        }

        func required<Value>(_ key: String, _ read: (JSONNode, Path) throws(DecodingError) -> Value) throws(DecodingError) -> Value {
            guard let node = node(key) else {
                throw .keyNotFound(JSONKey(key), context(path, "No value associated with key \(key)."))
            }
            return try read(node) { path + [JSONKey(key)] }
        }

        /// Nil where the key is missing or null, as `decodeIfPresent`.
        func optional<Value>(_ key: String, _ read: (JSONNode, Path) throws(DecodingError) -> Value) throws(DecodingError) -> Value? {
            guard let node = node(key) else { return nil }
            if case .null = node { return nil }
            return try read(node) { path + [JSONKey(key)] }
        }
    }
}

extension JSONNode {
    /// How JSONDecoder names what it found instead.
    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .number: "number"
        case .string: "a string"
        case .array: "an array"
        case .object: "a dictionary"
        }
    }
}

/// Reads a donation's fields from an event's members as `Donation`'s `Decodable` conformance
/// reads them: the same values, or the same error, the first in the fields' order.
struct DonationReader: DonationFieldVisitor {
    let fields: PushJSON.Fields
    var donation = Donation.unread
    /// The first field that could not be read; the fields after it are not looked at, as
    /// `Decodable` stops at its first error.
    var failure: DecodingError?

    @inline(__always)
    private mutating func read<Value>(_ access: DonationField.Access<Value>, _ value: (PushJSON.Fields) throws(DecodingError) -> Value) {
        if case .some = failure { return }
        do {
            access.set(&donation, try value(fields))
        } catch {
            failure = error
        }
    }

    @inline(__always)
    mutating func bundleId(_ label: DonationField.Label, _ access: DonationField.Access<String>) {
        read(access) { fields throws(DecodingError) in try fields.required(label.name, PushJSON.string) }
    }

    @inline(__always)
    mutating func text(_ label: DonationField.Label, _ access: DonationField.Access<String>, length: ClosedRange<Int>) {
        read(access) { fields throws(DecodingError) in try fields.required(label.name, PushJSON.string) }
    }

    @inline(__always)
    mutating func optionalText(_ label: DonationField.Label, _ access: DonationField.Access<String?>, length: ClosedRange<Int>,
                               requiredFor: DonationKind?) {
        read(access) { fields throws(DecodingError) in try fields.optional(label.name, PushJSON.string) }
    }

    @inline(__always)
    mutating func phrase(_ label: DonationField.Label, _ access: DonationField.Access<String?>) {
        read(access) { fields throws(DecodingError) in try fields.optional(label.name, PushJSON.string) }
    }

    @inline(__always)
    mutating func kind(_ label: DonationField.Label, _ access: DonationField.Access<DonationKind>) {
        read(access) { fields throws(DecodingError) in
            try fields.required(label.name) { node, path throws(DecodingError) in try PushJSON.rawValue(node, path: path, as: DonationKind.self) }
        }
    }

    @inline(__always)
    mutating func texts(_ label: DonationField.Label, _ access: DonationField.Access<[String]>, maxCount: Int, length: ClosedRange<Int>) {
        read(access) { fields throws(DecodingError) in try fields.optional(label.name, PushJSON.strings) ?? [] }
    }

    @inline(__always)
    mutating func flag(_ label: DonationField.Label, _ access: DonationField.Access<Bool>, absent: Bool) {
        read(access) { fields throws(DecodingError) in try fields.optional(label.name, PushJSON.bool) ?? absent }
    }

    @inline(__always)
    mutating func object(_ label: DonationField.Label, _ access: DonationField.Access<[String: JSONValue]>, maxBytes: Int) {
        read(access) { fields throws(DecodingError) in try fields.optional(label.name, PushJSON.parameters) ?? [:] }
    }

    @inline(__always)
    mutating func integer(_ label: DonationField.Label, _ access: DonationField.Access<Int?>, range: ClosedRange<Int>,
                          meaning: String, unit: String) {
        read(access) { fields throws(DecodingError) in
            try fields.optional(label.name) { node, path throws(DecodingError) in try PushJSON.integer(node, path: path, as: Int.self) }
        }
    }
}

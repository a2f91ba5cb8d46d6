import Foundation

/// Reads a push body, `{"events": [...]}`, into domain events straight from its bytes.
///
/// It says what `JSONDecoder` with the domain's `Decodable` conformances says, about valid and
/// invalid bodies alike: the same events, or the same `DecodingError` (kind, coding path and
/// type), checked in the same order. `PushJSONTests` holds the two equal on random histories
/// and on bodies broken in every field. It exists for speed: see `JSONTape`.
public enum PushJSON {
    /// The events of a push body, or the `DecodingError` that `JSONDecoder` would throw for it.
    public static func events(in bytes: UnsafeRawBufferPointer) throws(DecodingError) -> [Event] {
        let tape: JSONTape
        do {
            tape = try JSONParser.parse(bytes)
        } catch {
            throw .dataCorrupted(.init(codingPath: [], debugDescription: "The given data was not valid JSON.", underlyingError: error))
        }
        let result = tape.withDocument(over: bytes) { document in
            Result { () throws(DecodingError) -> [Event] in try events(in: document) }
        }
        return try result.get()
    }

    public static func events(in bytes: [UInt8]) throws(DecodingError) -> [Event] {
        let result = bytes.withUnsafeBytes { buffer in Result { () throws(DecodingError) -> [Event] in try events(in: buffer) } }
        return try result.get()
    }

    private static func events(in document: JSONDocument) throws(DecodingError) -> [Event] {
        var body = try Fields(document.root, at: .body)
        let elements = try body.required("events") { node, path throws(DecodingError) in try list(node, path: path) }
        var events: [Event] = []
        events.reserveCapacity(elements.count)
        for (index, node) in elements.enumerated() {
            events.append(try event(node, index: index))
        }
        return events
    }

    static func event(_ node: JSONNode, index: Int) throws(DecodingError) -> Event {
        var fields = try Fields(node, at: .event(index))
        let id = try fields.required("id", uuid)
        let seq = try fields.required("seq") { node, path throws(DecodingError) in try integer(node, path: path, as: Int64.self) }
        let hlc = try fields.required("hlc") { node, path throws(DecodingError) -> HLCTimestamp in
            var clock = try Fields(node, at: .eventMember(index, "hlc"))
            return HLCTimestamp(
                wallMillis: try clock.required("wallMillis") { node, path throws(DecodingError) in try integer(node, path: path, as: Int64.self) },
                counter: try clock.required("counter") { node, path throws(DecodingError) in try integer(node, path: path, as: Int.self) })
        }
        let type = try fields.required("type") { node, path throws(DecodingError) -> EventType in
            let type = try rawValue(node, path: path, as: EventType.self)
            guard type.isPushed else { throw .dataCorrupted(context(path(), "\(type.rawValue) is written by the service; a device cannot push it")) }
            return type
        }
        return Event(id: id, seq: seq, hlc: hlc, body: try body(type, &fields))
    }

    private static func body(_ type: EventType, _ fields: inout Fields) throws(DecodingError) -> EventBody {
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
            return .learningForgotten(LearningForgotten(scope: try learningScope(&fields)))
        case .learningPaused:
            let scope = try learningScope(&fields)
            if !scope.isPausable {
                throw .dataCorrupted(.init(codingPath: fields.path, debugDescription: LearningPaused.accountOrDevice))
            }
            return .learningPaused(LearningPaused(scope: scope, paused: try fields.required("paused", requiredBool)))
        }
    }

    /// A learning event's `scope` and the fields it needs, read as `LearningScope`'s decoder reads them.
    private static func learningScope(_ fields: inout Fields) throws(DecodingError) -> LearningScope {
        let name = try fields.required("scope", string)
        let scope = LearningScope(name: name, deviceId: try fields.optional("deviceId", uuid),
                                  bundleId: try fields.optional("bundleId", string), identifier: try fields.optional("identifier", string),
                                  place: try fields.optional("place", string))
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
        if node.kind == .null {
            return .valueNotFound(type, context(path, "Cannot get value of type \(type) -- found null value instead"))
        }
        return .typeMismatch(type, context(path, "Expected to decode \(type) but found \(node.kindName) instead."))
    }

    static func string(_ node: JSONNode, path: Path) throws(DecodingError) -> String {
        guard let value = node.string else { throw mismatch(String.self, node, path()) }
        return value
    }

    static func bool(_ node: JSONNode, path: Path) throws(DecodingError) -> Bool {
        switch node.kind {
        case .true: return true
        case .false: return false
        default: throw mismatch(Bool.self, node, path())
        }
    }

    /// A required boolean: JSONDecoder calls a null one a type mismatch, unlike other null values.
    static func requiredBool(_ node: JSONNode, path: Path) throws(DecodingError) -> Bool {
        if node.kind == .null { throw .typeMismatch(Bool.self, context(path(), "Expected to decode Bool but found null instead.")) }
        return try bool(node, path: path)
    }

    /// Read in the canonical form only (`UUID(canonical:)`); the message is JSONDecoder's.
    static func uuid(_ node: JSONNode, path: Path) throws(DecodingError) -> UUID {
        guard node.kind == .string else { throw mismatch(String.self, node, path()) }
        guard let value = UUID(canonicalBytes: node.text) else {
            throw .dataCorrupted(context(path(), invalidUUID))
        }
        return value
    }

    /// What a UUID that is not one is called (JSONDecoder's words).
    public static let invalidUUID = "Attempted to decode UUID from invalid UUID string."

    static func integer<Integer: FixedWidthInteger>(_ node: JSONNode, path: Path, as type: Integer.Type) throws(DecodingError) -> Integer {
        guard node.kind == .number else { throw mismatch(type, node, path()) }
        if let digits = Int64(jsonDigits: node.text) {
            if let value = Integer(exactly: digits) { return value }
        }
        let text = String(decoding: node.text, as: UTF8.self)
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

    static func list(_ node: JSONNode, path: Path) throws(DecodingError) -> JSONChildren {
        guard node.kind == .array else { throw mismatch([Any].self, node, path()) }
        return node.elements
    }

    static func strings(_ node: JSONNode, path: Path) throws(DecodingError) -> [String] {
        let elements = try list(node, path: path)
        var values: [String] = []
        values.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            guard let value = element.string else { throw mismatch(String.self, element, path() + [JSONKey(index)]) }
            values.append(value)
        }
        return values
    }

    static func parameters(_ node: JSONNode, path: Path) throws(DecodingError) -> [String: JSONValue] {
        guard node.kind == .object else { throw mismatch([String: Any].self, node, path()) }
        let members = node.members
        var values: [String: JSONValue] = [:]
        values.reserveCapacity(members.count)
        for member in members {
            let key = String(decoding: member.name.text, as: UTF8.self)
            values[key] = try value(member.value, path: { path() + [JSONKey(key)] })
        }
        return values
    }

    static func value(_ node: JSONNode, path: Path) throws(DecodingError) -> JSONValue {
        switch node.kind {
        case .null: return .null
        case .true: return .bool(true)
        case .false: return .bool(false)
        case .number:
            let text = String(decoding: node.text, as: UTF8.self)
            guard let number = Double(text), number.isFinite else {
                throw .dataCorrupted(context(path(), "Number \(text) is not representable in Swift."))
            }
            return .number(number)
        case .string: return .string(String(decoding: node.text, as: UTF8.self))
        case .array:
            let elements = node.elements
            var values: [JSONValue] = []
            values.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() { values.append(try value(element, path: { path() + [JSONKey(index)] })) }
            return .array(values)
        case .object: return .object(try parameters(node, path: path))
        }
    }

    /// Where an object read by `Fields` is. Its coding path is made only for an error: an array
    /// made for each event cost the reader instructions and an allocation, and a push's events are
    /// almost always well formed.
    enum Place {
        case body
        case event(Int)
        case eventMember(Int, String)

        var path: [JSONKey] {
            switch self {
            case .body: []
            case .event(let index): [JSONKey("events"), JSONKey(index)]
            case .eventMember(let index, let name): [JSONKey("events"), JSONKey(index), JSONKey(name)]
            }
        }
    }

    /// An object's members at a place, read by name as a keyed container reads them.
    struct Fields {
        let object: JSONNode
        let place: Place

        var path: [JSONKey] { place.path }

        /// The member to look at first: the one after the member found last, as its name's token
        /// and the number of members before it. Events are read in the order they are written
        /// (`Event`'s encoder writes them in it, as readers ask for them), so that most lookups
        /// find their member at the first try; a member absent, or out of that order, costs one
        /// pass over the object.
        private var resume: (token: Int, ordinal: Int)

        init(_ node: JSONNode, at place: Place) throws(DecodingError) {
            guard node.kind == .object else { throw mismatch([String: Any].self, node, place.path) }
            self.object = node
            self.place = place
            resume = (node.index + 1, 0)
        }

        /// A name is in an object once at most (`JSONParser` refuses it twice).
        private mutating func node(_ key: String) -> JSONNode? {
            let (token, ordinal) = resume
            let length = key.utf8.count
            return node(key, length: length, from: token, ordinal: ordinal, before: object.members.count)
                ?? node(key, length: length, from: object.index + 1, ordinal: 0, before: ordinal)
        }

        /// The member named `key` (`length` bytes) among the members from the one at `token`,
        /// the `ordinal`th, to the one before the `end`th. Lengths are compared first, from the
        /// tokens: most members are not the one looked for.
        private mutating func node(_ key: String, length: Int, from token: Int, ordinal: Int, before end: Int) -> JSONNode? {
            let document = object.document
            var name = token
            for ordinal in ordinal..<max(ordinal, end) {
                let value = name + 1
                let next = document.after(value)
                let nameToken = document.tokens[name]
                if Int(nameToken.upper &- nameToken.lower) == length, JSONNode(document: document, index: name).hasText(key) {
                    resume = (next, ordinal + 1)
                    return JSONNode(document: document, index: value)
                }
                name = next
            }
            return nil
        }

        mutating func required<Value>(_ key: String, _ read: (JSONNode, Path) throws(DecodingError) -> Value) throws(DecodingError) -> Value {
            let place = self.place
            guard let node = node(key) else {
                throw .keyNotFound(JSONKey(key), context(place.path, "No value associated with key \(key)."))
            }
            return try read(node) { place.path + [JSONKey(key)] }
        }

        /// Nil where the key is missing or null, as `decodeIfPresent`.
        mutating func optional<Value>(_ key: String, _ read: (JSONNode, Path) throws(DecodingError) -> Value) throws(DecodingError) -> Value? {
            guard let node = node(key) else { return nil }
            if node.kind == .null { return nil }
            let place = self.place
            return try read(node) { place.path + [JSONKey(key)] }
        }
    }
}

extension Int64 {
    /// A JSON number written as an integer of at most 18 digits, read from its bytes; nil for any
    /// other number (a fraction, an exponent, more digits), which is read from its text.
    init?(jsonDigits text: UnsafeRawBufferPointer) {
        let negative = text.first == UInt8(ascii: "-")
        let digits = negative ? UnsafeRawBufferPointer(rebasing: text.dropFirst()) : text
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var value: Int64 = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        self = negative ? -value : value
    }
}

/// Reads a donation's fields from an event's members as `Donation`'s `Decodable` conformance
/// reads them: the same values, or the same error, the first in the fields' order.
struct DonationReader: DonationFieldVisitor {
    var fields: PushJSON.Fields
    var donation = Donation.unread
    /// The first field that could not be read; the fields after it are not looked at, as
    /// `Decodable` stops at its first error.
    var failure: DecodingError?
    /// Whether `failure` is set: asked before every field, where asking the optional
    /// `DecodingError` itself went through the runtime's generic enum witness.
    private var failed = false

    init(fields: PushJSON.Fields) {
        self.fields = fields
    }

    @inline(__always)
    private mutating func read<Value>(_ access: DonationField.Access<Value>, _ read: (inout PushJSON.Fields) throws(DecodingError) -> Value) {
        guard !failed else { return }
        do {
            let value = try read(&fields)
            access.set(&donation, value)
        } catch {
            failure = error
            failed = true
        }
    }

    @inline(__always)
    mutating func bundleId(_ label: DonationField.Label, _ access: DonationField.Access<String>) {
        read(access) { (fields: inout PushJSON.Fields) throws(DecodingError) in try fields.required(label.name, PushJSON.string) }
    }

    @inline(__always)
    mutating func text(_ label: DonationField.Label, _ access: DonationField.Access<String>, length: ClosedRange<Int>) {
        read(access) { (fields: inout PushJSON.Fields) throws(DecodingError) in try fields.required(label.name, PushJSON.string) }
    }

    @inline(__always)
    mutating func optionalText(_ label: DonationField.Label, _ access: DonationField.Access<String?>, length: ClosedRange<Int>,
                               requiredFor: DonationKind?) {
        read(access) { (fields: inout PushJSON.Fields) throws(DecodingError) in try fields.optional(label.name, PushJSON.string) }
    }

    @inline(__always)
    mutating func phrase(_ label: DonationField.Label, _ access: DonationField.Access<String?>) {
        read(access) { (fields: inout PushJSON.Fields) throws(DecodingError) in try fields.optional(label.name, PushJSON.string) }
    }

    @inline(__always)
    mutating func kind(_ label: DonationField.Label, _ access: DonationField.Access<DonationKind>) {
        read(access) { (fields: inout PushJSON.Fields) throws(DecodingError) in
            try fields.required(label.name) { node, path throws(DecodingError) in try PushJSON.rawValue(node, path: path, as: DonationKind.self) }
        }
    }

    @inline(__always)
    mutating func texts(_ label: DonationField.Label, _ access: DonationField.Access<[String]>, maxCount: Int, length: ClosedRange<Int>) {
        read(access) { (fields: inout PushJSON.Fields) throws(DecodingError) in try fields.optional(label.name, PushJSON.strings) ?? [] }
    }

    @inline(__always)
    mutating func flag(_ label: DonationField.Label, _ access: DonationField.Access<Bool>, absent: Bool) {
        read(access) { (fields: inout PushJSON.Fields) throws(DecodingError) in try fields.optional(label.name, PushJSON.bool) ?? absent }
    }

    @inline(__always)
    mutating func object(_ label: DonationField.Label, _ access: DonationField.Access<[String: JSONValue]>, maxBytes: Int) {
        read(access) { (fields: inout PushJSON.Fields) throws(DecodingError) in try fields.optional(label.name, PushJSON.parameters) ?? [:] }
    }

    @inline(__always)
    mutating func integer(_ label: DonationField.Label, _ access: DonationField.Access<Int?>, range: ClosedRange<Int>,
                          meaning: String, unit: String) {
        read(access) { (fields: inout PushJSON.Fields) throws(DecodingError) in
            try fields.optional(label.name) { node, path throws(DecodingError) in try PushJSON.integer(node, path: path, as: Int.self) }
        }
    }

    @inline(__always)
    mutating func place(_ label: DonationField.Label, _ access: DonationField.Access<String?>) {
        read(access) { (fields: inout PushJSON.Fields) throws(DecodingError) in try fields.optional(label.name, PushJSON.string) }
    }
}

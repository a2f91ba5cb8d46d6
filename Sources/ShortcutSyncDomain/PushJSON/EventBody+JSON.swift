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
            var writer = DonationWriter(donation: donation, json: consume json)
            Donation.visitFields(&writer)
            // Closed where the writer holds it: a copy back into `json` would share its bytes,
            // and closing them would copy them.
            return writer.json.closed()
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
        case .signedOut:
            break
        case .learningForgotten(let forgotten):
            forgotten.scope.writeFields(into: &json)
        case .learningPaused(let paused):
            paused.scope.writeFields(into: &json)
            json.field("paused", paused.paused)
        }
        return json.closed()
    }
}

extension LearningScope {
    /// The fields `encodeFields(to:)` writes.
    fileprivate func writeFields(into json: inout JSONText) {
        json.field("scope", name)
        switch self {
        case .account: break
        case .device(let id): json.field("deviceId", id.uuidString)
        case .shortcut(let id):
            json.field("bundleId", id.bundleId)
            json.field("identifier", id.identifier)
        case .place(let slot): json.field("place", PlaceToken.prefix(ofSlot: slot))
        }
    }
}

/// Writes a donation's fields into `json` as `Donation`'s `Encodable` conformance writes them:
/// nil is left out.
struct DonationWriter: DonationFieldVisitor {
    let donation: Donation
    var json: JSONText

    @inline(__always)
    mutating func bundleId(_ label: DonationField.Label, _ access: DonationField.Access<String>) {
        json.field(label.name, access.get(donation))
    }

    @inline(__always)
    mutating func text(_ label: DonationField.Label, _ access: DonationField.Access<String>, length: ClosedRange<Int>) {
        json.field(label.name, access.get(donation))
    }

    @inline(__always)
    mutating func optionalText(_ label: DonationField.Label, _ access: DonationField.Access<String?>, length: ClosedRange<Int>,
                               requiredFor: DonationKind?) {
        json.field(label.name, access.get(donation))
    }

    @inline(__always)
    mutating func phrase(_ label: DonationField.Label, _ access: DonationField.Access<String?>) {
        json.field(label.name, access.get(donation))
    }

    @inline(__always)
    mutating func kind(_ label: DonationField.Label, _ access: DonationField.Access<DonationKind>) {
        json.field(label.name, access.get(donation).rawValue)
    }

    @inline(__always)
    mutating func texts(_ label: DonationField.Label, _ access: DonationField.Access<[String]>, maxCount: Int, length: ClosedRange<Int>) {
        json.field(label.name, access.get(donation))
    }

    @inline(__always)
    mutating func flag(_ label: DonationField.Label, _ access: DonationField.Access<Bool>, absent: Bool) {
        json.field(label.name, access.get(donation))
    }

    @inline(__always)
    mutating func object(_ label: DonationField.Label, _ access: DonationField.Access<[String: JSONValue]>, maxBytes: Int) {
        json.key(label.name)
        json.value(.object(access.get(donation)))
    }

    @inline(__always)
    mutating func integer(_ label: DonationField.Label, _ access: DonationField.Access<Int?>, range: ClosedRange<Int>,
                          meaning: String, unit: String) {
        guard let number = access.get(donation) else { return }
        json.key(label.name)
        json.value(.number(Double(number)))
    }

    @inline(__always)
    mutating func place(_ label: DonationField.Label, _ access: DonationField.Access<String?>) {
        json.field(label.name, access.get(donation))
    }
}

/// A JSON object written field by field, as UTF-8 bytes.
struct JSONText {
    private var bytes: [UInt8] = []
    private var first = true

    /// One allocation for a body of up to 512 bytes (an array literal, then its reserve, were two).
    init() {
        bytes.reserveCapacity(512)
        bytes.append(UInt8(ascii: "{"))
    }

    /// The object, closed: its bytes are closed in place, not copied first. Nothing is written after it.
    mutating func closed() -> String {
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// How many bytes `value` takes written as JSON (`value(_:)`), and whether a key or a string
    /// in it holds U+0000, in one walk that writes nothing: the validator asks both of every
    /// donation's parameters, and writing them only to count the bytes cost it a quarter of its
    /// instructions (callgrind). `EventBodyJSONTests` holds the count to what is written.
    static func measure(_ value: JSONValue) -> (bytes: Int, hasNull: Bool) {
        var measure = (bytes: 0, hasNull: false)
        add(value, to: &measure)
        return measure
    }

    private static func add(_ value: JSONValue, to measure: inout (bytes: Int, hasNull: Bool)) {
        switch value {
        case .null: measure.bytes += 4
        case .bool(let flag): measure.bytes += flag ? 4 : 5
        case .number(let number): measure.bytes += Self.number(number).utf8.count
        case .string(let string): add(string, to: &measure)
        case .array(let values):
            measure.bytes += 2 + max(values.count - 1, 0)
            for element in values { add(element, to: &measure) }
        case .object(let members):
            // Braces, commas and a colon for each member.
            measure.bytes += 2 + max(members.count - 1, 0) + members.count
            for (name, element) in members {
                add(name, to: &measure)
                add(element, to: &measure)
            }
        }
    }

    /// A string as `string(_:)` writes it: quoted, each byte one byte but those it escapes, `"`,
    /// `\\`, LF, CR and TAB in two, any other control character in six (`\u00XX`).
    private static func add(_ string: String, to measure: inout (bytes: Int, hasNull: Bool)) {
        func scan(_ utf8: some Sequence<UInt8>) -> (bytes: Int, hasNull: Bool) {
            var bytes = 2
            var hasNull = false
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): bytes += 2
                case 0:
                    bytes += 6
                    hasNull = true
                case 0x01..<0x20: bytes += 6
                default: bytes += 1
                }
            }
            return (bytes, hasNull)
        }
        let (bytes, hasNull) = string.utf8.withContiguousStorageIfAvailable { scan($0) } ?? scan(string.utf8)
        measure.bytes += bytes
        measure.hasNull = measure.hasNull || hasNull
    }

    mutating func key(_ name: String) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        string(name)
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func field(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    mutating func field(_ name: String, _ value: Bool) {
        key(name)
        literal(value ? "true" : "false")
    }

    mutating func field(_ name: String, _ values: [String]) {
        key(name)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            string(value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    mutating func value(_ value: JSONValue) {
        switch value {
        case .null: literal("null")
        case .bool(let flag): literal(flag ? "true" : "false")
        case .number(let number): bytes.append(contentsOf: Self.number(number).utf8)
        case .string(let string): self.string(string)
        case .array(let values):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in values.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                self.value(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (index, (name, element)) in members.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                string(name)
                bytes.append(UInt8(ascii: ":"))
                self.value(element)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// An integral number without a fraction, any other in Swift's shortest form that reads back
    /// the same (JSON has no NaN or infinity; `JSONValue` never holds them).
    static func number(_ value: Double) -> String {
        if value.rounded() == value, abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    private mutating func literal(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// The string quoted, with `"`, `\` and control characters escaped; runs of other bytes are copied whole.
    private mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var runStart = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                escape(byte)
                runStart = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func escape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case UInt8(ascii: "\n"): bytes.append(UInt8(ascii: "n"))
        case UInt8(ascii: "\r"): bytes.append(UInt8(ascii: "r"))
        case UInt8(ascii: "\t"): bytes.append(UInt8(ascii: "t"))
        default:
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
        }
    }
}

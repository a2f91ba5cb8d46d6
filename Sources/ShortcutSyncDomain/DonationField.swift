import Foundation

/// One field of a donation as the contract states it: its JSON name, what it holds with the limit
/// DESIGN §2 sets on it, and whether the shortcut's view shows it.
///
/// `Donation.visitFields` declares them, once; every reading and writing of a donation derives
/// from it: the push's reader (`PushJSON`), the body the service stores (`EventBody.fieldsJSON`)
/// and `EventValidator` visit it, and `Donation`'s `Codable` conformance, `ShortcutView` and
/// `ShortcutHistory` walk `Donation.fields`, the same declaration as a list. So a new field is a
/// property of `Donation` and a line there, plus its schema in `openapi.yaml`, which
/// `DonationFieldTests` holds to the list. A field of a shape there is no case for is a new
/// `Shape` case and visitor method, and the compiler then names every reader and writer that
/// must learn it.
public struct DonationField: Sendable {
    /// What a field holds, the limit it is held to, and where in a `Donation` it is kept.
    public enum Shape: Sendable {
        /// An app's reverse-DNS name, `Limits.bundleIdLength` code points; required.
        case bundleId(Access<String>)
        /// Text of `length` code points, not blank; required.
        case text(Access<String>, length: ClosedRange<Int>)
        /// Text of `length` code points, not blank; absent is nil. Required of a donation of the
        /// kind `requiredFor`, and then not checked at all in a donation of another kind.
        case optionalText(Access<String?>, length: ClosedRange<Int>, requiredFor: DonationKind?)
        /// A voice phrase (`Limits.phraseLength` code points) that normalizes to something; absent is nil.
        case phrase(Access<String?>)
        /// The donation's kind, one of `DonationKind`'s names; required.
        case kind(Access<DonationKind>)
        /// At most `maxCount` texts of `length` code points each; absent is none.
        case texts(Access<[String]>, maxCount: Int, length: ClosedRange<Int>)
        /// A flag; absent is `absent`.
        case flag(Access<Bool>, absent: Bool)
        /// Any JSON object of at most `maxBytes` bytes as stored, no U+0000 in it; absent is empty.
        case object(Access<[String: JSONValue]>, maxBytes: Int)
        /// An integer in `range`; absent is nil. `meaning` and `unit` name it in the validator's
        /// answer: "is 900; an offset from UTC is −720 to 840 minutes".
        case integer(Access<Int?>, range: ClosedRange<Int>, meaning: String, unit: String)
        /// A place token (`PlaceToken`): 32 lowercase hex digits; absent is nil.
        case place(Access<String?>)
    }

    /// How a field of type `Value` is read from and written into a `Donation`: closures rather
    /// than key paths, which cost the push's reader and writer a generic projection (about
    /// 1,400 instructions) for each field of each event, against a call here.
    public struct Access<Value>: Sendable {
        public let get: @Sendable (Donation) -> Value
        public let set: @Sendable (inout Donation, Value) -> Void

        @inline(__always)
        public init(_ get: @escaping @Sendable (Donation) -> Value, _ set: @escaping @Sendable (inout Donation, Value) -> Void) {
            self.get = get
            self.set = set
        }
    }

    /// Whether a push must carry a field.
    public enum Presence: Sendable, Hashable {
        case required
        /// Required of a donation of this kind, optional in another.
        case requiredFor(DonationKind)
        /// Absent stands for nil or for the shape's default.
        case optional
    }

    /// Its name in JSON: in a push, in the stored body, in a view and in `openapi.yaml`.
    public let name: String
    public let shape: Shape
    /// Whether `ShortcutView` shows it (and `ShortcutHistory` reports its changes). A field that
    /// only says when the person donated, as `utcOffsetMinutes`, is the suggestions' and not the view's.
    public let inView: Bool
    /// Whether it is a text a person reads as it is (a title), which holds no control character
    /// (`ControlCharacters`); an identifier is the app's key, held to the text rules alone.
    public let readByPeople: Bool

    public init(_ name: String, _ shape: Shape, inView: Bool = true, readByPeople: Bool = false) {
        self.name = name
        self.shape = shape
        self.inView = inView
        self.readByPeople = readByPeople
    }

    /// Follows from the shape: only an optional text may be required, and of one kind only.
    public var presence: Presence {
        switch shape {
        case .bundleId, .text, .kind: .required
        case .optionalText(_, _, let kind?): .requiredFor(kind)
        case .optionalText, .phrase, .texts, .flag, .object, .integer, .place: .optional
        }
    }

    /// The field of `source` copied into `target`: how a view keeps only the fields it shows.
    func copy(from source: Donation, to target: inout Donation) {
        switch shape {
        case .bundleId(let stored), .text(let stored, _): stored.set(&target, stored.get(source))
        case .optionalText(let stored, _, _), .phrase(let stored), .place(let stored): stored.set(&target, stored.get(source))
        case .kind(let stored): stored.set(&target, stored.get(source))
        case .texts(let stored, _, _): stored.set(&target, stored.get(source))
        case .flag(let stored, _): stored.set(&target, stored.get(source))
        case .object(let stored, _): stored.set(&target, stored.get(source))
        case .integer(let stored, _, _, _): stored.set(&target, stored.get(source))
        }
    }

    /// Whether the field differs between two donations: what a shortcut's history reports as changed.
    public func differs(_ old: Donation, _ new: Donation) -> Bool {
        switch shape {
        case .bundleId(let stored), .text(let stored, _): stored.get(old) != stored.get(new)
        case .optionalText(let stored, _, _), .phrase(let stored), .place(let stored): stored.get(old) != stored.get(new)
        case .kind(let stored): stored.get(old) != stored.get(new)
        case .texts(let stored, _, _): stored.get(old) != stored.get(new)
        case .flag(let stored, _): stored.get(old) != stored.get(new)
        case .object(let stored, _): stored.get(old) != stored.get(new)
        case .integer(let stored, _, _, _): stored.get(old) != stored.get(new)
        }
    }
}

// MARK: Codable

extension DonationField {
    /// A coding key named by a field, so that `Codable` reads the names the list declares.
    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }

        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Reads the field as `Donation`'s `Decodable` conformance does: absent is nil or the default.
    func decode(into donation: inout Donation, from container: KeyedDecodingContainer<Key>) throws {
        let key = Key(stringValue: name)
        switch shape {
        case .bundleId(let stored), .text(let stored, _): stored.set(&donation, try container.decode(String.self, forKey: key))
        case .optionalText(let stored, _, _), .phrase(let stored), .place(let stored):
            stored.set(&donation, try container.decodeIfPresent(String.self, forKey: key))
        case .kind(let stored): stored.set(&donation, try container.decode(DonationKind.self, forKey: key))
        case .texts(let stored, _, _): stored.set(&donation, try container.decodeIfPresent([String].self, forKey: key) ?? [])
        case .flag(let stored, let absent): stored.set(&donation, try container.decodeIfPresent(Bool.self, forKey: key) ?? absent)
        case .object(let stored, _): stored.set(&donation, try container.decodeIfPresent([String: JSONValue].self, forKey: key) ?? [:])
        case .integer(let stored, _, _, _): stored.set(&donation, try container.decodeIfPresent(Int.self, forKey: key))
        }
    }

    /// Writes the field as a synthesized `Encodable` conformance would: nil is left out.
    func encode(_ donation: Donation, to container: inout KeyedEncodingContainer<Key>) throws {
        let key = Key(stringValue: name)
        switch shape {
        case .bundleId(let stored), .text(let stored, _): try container.encode(stored.get(donation), forKey: key)
        case .optionalText(let stored, _, _), .phrase(let stored), .place(let stored): try container.encodeIfPresent(stored.get(donation), forKey: key)
        case .kind(let stored): try container.encode(stored.get(donation), forKey: key)
        case .texts(let stored, _, _): try container.encode(stored.get(donation), forKey: key)
        case .flag(let stored, _): try container.encode(stored.get(donation), forKey: key)
        case .object(let stored, _): try container.encode(stored.get(donation), forKey: key)
        case .integer(let stored, _, _, _): try container.encodeIfPresent(stored.get(donation), forKey: key)
        }
    }
}

// MARK: Visiting

extension DonationField {
    /// A field's name, and whether the view shows it: what `Donation.visitFields` says of every
    /// field besides its shape. A string literal is a field the view shows.
    public struct Label: Sendable, ExpressibleByStringLiteral {
        public let name: String
        public let inView: Bool
        /// A text a person reads as it is: no control character in it (`DonationField.readByPeople`).
        public let readByPeople: Bool

        public init(_ name: String, inView: Bool, readByPeople: Bool = false) {
            self.name = name
            self.inView = inView
            self.readByPeople = readByPeople
        }

        public init(stringLiteral name: String) {
            self.init(name, inView: true)
        }
    }
}

/// What walks a donation's fields with `Donation.visitFields`: a method for each `Shape` case,
/// called with the field's label, where it is kept and its limit.
///
/// The push's reader, its writer and the validator are visitors rather than walks of
/// `Donation.fields` because they run for every event: a visit is given each field's shape and
/// access as arguments, which inline, where a walk of the list copied and released each field's
/// description for each event (32 % more instructions in the writer, 8 % in the validator).
protocol DonationFieldVisitor {
    mutating func bundleId(_ label: DonationField.Label, _ access: DonationField.Access<String>)
    mutating func text(_ label: DonationField.Label, _ access: DonationField.Access<String>, length: ClosedRange<Int>)
    mutating func optionalText(_ label: DonationField.Label, _ access: DonationField.Access<String?>, length: ClosedRange<Int>,
                               requiredFor: DonationKind?)
    mutating func phrase(_ label: DonationField.Label, _ access: DonationField.Access<String?>)
    mutating func kind(_ label: DonationField.Label, _ access: DonationField.Access<DonationKind>)
    mutating func texts(_ label: DonationField.Label, _ access: DonationField.Access<[String]>, maxCount: Int, length: ClosedRange<Int>)
    mutating func flag(_ label: DonationField.Label, _ access: DonationField.Access<Bool>, absent: Bool)
    mutating func object(_ label: DonationField.Label, _ access: DonationField.Access<[String: JSONValue]>, maxBytes: Int)
    mutating func integer(_ label: DonationField.Label, _ access: DonationField.Access<Int?>, range: ClosedRange<Int>,
                          meaning: String, unit: String)
    mutating func place(_ label: DonationField.Label, _ access: DonationField.Access<String?>)
}

/// The visitor that writes the declaration down as `Donation.fields`.
struct DonationFieldList: DonationFieldVisitor {
    var fields: [DonationField] = []

    private mutating func add(_ label: DonationField.Label, _ shape: DonationField.Shape) {
        fields.append(DonationField(label.name, shape, inView: label.inView, readByPeople: label.readByPeople))
    }

    mutating func bundleId(_ label: DonationField.Label, _ access: DonationField.Access<String>) {
        add(label, .bundleId(access))
    }

    mutating func text(_ label: DonationField.Label, _ access: DonationField.Access<String>, length: ClosedRange<Int>) {
        add(label, .text(access, length: length))
    }

    mutating func optionalText(_ label: DonationField.Label, _ access: DonationField.Access<String?>, length: ClosedRange<Int>,
                               requiredFor: DonationKind?) {
        add(label, .optionalText(access, length: length, requiredFor: requiredFor))
    }

    mutating func phrase(_ label: DonationField.Label, _ access: DonationField.Access<String?>) {
        add(label, .phrase(access))
    }

    mutating func kind(_ label: DonationField.Label, _ access: DonationField.Access<DonationKind>) {
        add(label, .kind(access))
    }

    mutating func texts(_ label: DonationField.Label, _ access: DonationField.Access<[String]>, maxCount: Int, length: ClosedRange<Int>) {
        add(label, .texts(access, maxCount: maxCount, length: length))
    }

    mutating func flag(_ label: DonationField.Label, _ access: DonationField.Access<Bool>, absent: Bool) {
        add(label, .flag(access, absent: absent))
    }

    mutating func object(_ label: DonationField.Label, _ access: DonationField.Access<[String: JSONValue]>, maxBytes: Int) {
        add(label, .object(access, maxBytes: maxBytes))
    }

    mutating func integer(_ label: DonationField.Label, _ access: DonationField.Access<Int?>, range: ClosedRange<Int>,
                          meaning: String, unit: String) {
        add(label, .integer(access, range: range, meaning: meaning, unit: unit))
    }

    mutating func place(_ label: DonationField.Label, _ access: DonationField.Access<String?>) {
        add(label, .place(access))
    }
}

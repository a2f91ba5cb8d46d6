import Foundation

/// One thing wrong with the input, located by a JSON pointer (RFC 6901) into it.
public struct FieldError: Sendable, Hashable, Codable, CustomStringConvertible {
    public var pointer: String
    public var detail: String

    public init(pointer: String, detail: String) {
        self.pointer = pointer
        self.detail = detail
    }

    public var description: String { "\(pointer.isEmpty ? "/" : pointer): \(detail)" }

    /// The same error, seen from an enclosing document: `/seq` under `/events/3` is `/events/3/seq`.
    public func nested(under prefix: String) -> FieldError {
        FieldError(pointer: prefix + pointer, detail: detail)
    }
}

/// Input that breaks the contract's limits; nothing of it may be stored.
public struct ValidationError: Error, Sendable, Hashable, CustomStringConvertible {
    public var errors: [FieldError]

    public init(_ errors: [FieldError]) {
        self.errors = errors
    }

    public var description: String {
        "invalid input: " + errors.map(\.description).joined(separator: "; ")
    }
}

/// The limits of DESIGN §2, as `openapi.yaml` declares them.
///
/// Lengths count Unicode code points (`unicodeScalars`), as JSON Schema's `minLength` and
/// `maxLength` do, so that the spec and the code refuse the same strings: "é" written as `e` and a
/// combining accent is two, a flag emoji two, "汤" one. (Before, lengths counted grapheme clusters.)
public enum Limits {
    public static let bundleIdLength = 1...255
    public static let identifierLength = 1...256
    public static let titleLength = 1...200
    public static let phraseLength = 1...100
    public static let maxKeywords = 20
    /// Each keyword: not in DESIGN §2, chosen here as the length of a title (1–200 code points).
    public static let keywordLength = 1...200
    public static let identifiersCount = 1...1000
    public static let maxInstalled = 2000
    public static let maxParametersBytes = 16 * 1024
    public static let maxEventsPerPush = 500
    public static let maxPushBytes = 1024 * 1024
    public static let maxClockSkewMillis: Int64 = 5 * 60 * 1000
    /// A device's seqs (DESIGN §5): 2^53 is the largest integer every JSON reader keeps exactly,
    /// and leaves room for any arithmetic on a batch's seqs without overflow.
    public static let seqRange: ClosedRange<Int64> = 1...(1 << 53)
    /// An hlc's counter: 0…2^31−1, so that a clock moving past it never overflows.
    public static let hlcCounterRange: ClosedRange<Int> = 0...Int(Int32.max)
    /// An hlc's wall clock as the spec declares it (2^53−1); a push is held to the server's clock
    /// plus `maxClockSkewMillis` besides.
    public static let hlcWallRange: ClosedRange<Int64> = 0...((1 << 53) - 1)

    // Per person (DESIGN §5): nothing one person does may make the service hold without bound.
    /// Open streams per device; a further one ends the oldest.
    public static let maxStreamsPerDevice = 4
    /// Signed-in devices per account.
    public static let maxDevicesPerAccount = 100
    /// Existing shortcuts per account.
    public static let maxShortcutsPerAccount = 10_000
}

/// Checks an event against every limit of DESIGN §2, collecting all violations.
public struct EventValidator: Sendable {
    /// The server's clock in epoch milliseconds; events may not be more than 5 minutes ahead of it.
    public var nowMillis: Int64

    public init(nowMillis: Int64) {
        self.nowMillis = nowMillis
    }

    /// Every violation in `event`, with pointers relative to the event object.
    public func violations(of event: Event) -> [FieldError] {
        var check = Checker()
        if !Limits.seqRange.contains(event.seq) {
            check.fail("/seq", "must be 1 to \(Limits.seqRange.upperBound), not \(event.seq)")
        }
        let wall = event.hlc.wallMillis
        if wall < 0 {
            check.fail("/hlc/wallMillis", "must not be negative")
        } else if wall > nowMillis.addingSaturating(Limits.maxClockSkewMillis) {
            // Both are non-negative here, so the difference cannot overflow.
            check.fail("/hlc/wallMillis",
                       "is \(wall - max(nowMillis, 0)) ms ahead of the server's clock; at most \(Limits.maxClockSkewMillis) ms is allowed")
        } else if !Limits.hlcWallRange.contains(wall) {
            check.fail("/hlc/wallMillis", "must be at most \(Limits.hlcWallRange.upperBound)")
        }
        if !Limits.hlcCounterRange.contains(event.hlc.counter) {
            check.fail("/hlc/counter", "must be 0 to \(Limits.hlcCounterRange.upperBound), not \(event.hlc.counter)")
        }
        switch event.body {
        case .donation(let donation):
            check.bundleId(donation.bundleId)
            check.text(donation.identifier, Limits.identifierLength, at: "/identifier")
            switch donation.kind {
            case .userActivity:
                check.required(donation.activityType, Limits.identifierLength, at: "/activityType", because: "kind userActivity")
            case .intent:
                check.required(donation.intentType, Limits.identifierLength, at: "/intentType", because: "kind intent")
            }
            check.text(donation.title, Limits.titleLength, at: "/title")
            check.optional(donation.subtitle, Limits.titleLength, at: "/subtitle")
            check.optional(donation.groupIdentifier, Limits.identifierLength, at: "/groupIdentifier")
            if let phrase = donation.suggestedInvocationPhrase {
                check.phrase(phrase, at: "/suggestedInvocationPhrase")
            }
            if donation.keywords.count > Limits.maxKeywords {
                check.fail("/keywords", "has \(donation.keywords.count) keywords; at most \(Limits.maxKeywords) are allowed")
            }
            for (index, keyword) in donation.keywords.enumerated() {
                check.text(keyword, Limits.keywordLength, at: "/keywords/\(index)")
            }
            let size = Self.encodedSize(donation.parameters)
            if size > Limits.maxParametersBytes {
                check.fail("/parameters", "is \(size) bytes encoded; at most \(Limits.maxParametersBytes) are allowed")
            } else if BlankText.containsNull(.object(donation.parameters)) {
                check.fail("/parameters", "must not contain U+0000 in any key or string")
            }
        case .deletion(let deletion):
            check.bundleId(deletion.bundleId)
            switch deletion.selector {
            case .identifiers(let identifiers):
                if !Limits.identifiersCount.contains(identifiers.count) {
                    check.fail("/identifiers", "must list 1 to \(Limits.identifiersCount.upperBound) identifiers, not \(identifiers.count)")
                }
                for (index, identifier) in identifiers.enumerated() {
                    check.text(identifier, Limits.identifierLength, at: "/identifiers/\(index)")
                }
            case .groupIdentifier(let group):
                check.text(group, Limits.identifierLength, at: "/groupIdentifier")
            case .all:
                break
            }
        case .voiceShortcutAdded(let added):
            check.phrase(added.phrase, at: "/phrase")
            check.bundleId(added.bundleId)
            check.text(added.identifier, Limits.identifierLength, at: "/identifier")
            check.text(added.title, Limits.titleLength, at: "/title")
        case .voiceShortcutUpdated(let updated):
            check.phrase(updated.phrase, at: "/phrase")
        case .voiceShortcutDeleted:
            break
        case .appsReported(let report):
            if report.installed.count > Limits.maxInstalled {
                check.fail("/installed", "lists \(report.installed.count) apps; at most \(Limits.maxInstalled) are allowed")
            }
            for (index, bundleId) in report.installed.enumerated() {
                check.bundleId(bundleId, at: "/installed/\(index)")
            }
        }
        return check.errors
    }

    /// Checks a whole push: its size, each event, and that ids and seqs are not repeated within it.
    public func violations(ofBatch events: [Event]) -> [FieldError] {
        var errors: [FieldError] = []
        if events.isEmpty {
            errors.append(FieldError(pointer: "/events", detail: "must hold at least one event"))
        }
        if events.count > Limits.maxEventsPerPush {
            errors.append(FieldError(pointer: "/events", detail: "holds \(events.count) events; at most \(Limits.maxEventsPerPush) are allowed in one push"))
            return errors
        }
        var seenIds: [UUID: Int] = [:]
        var seenSeqs: [Int64: Int] = [:]
        for (index, event) in events.enumerated() {
            let prefix = "/events/\(index)"
            errors += violations(of: event).map { $0.nested(under: prefix) }
            if let first = seenIds.updateValue(index, forKey: event.id) {
                errors.append(FieldError(pointer: prefix + "/id", detail: "repeats the id of /events/\(first)"))
            }
            if let first = seenSeqs.updateValue(index, forKey: event.seq) {
                errors.append(FieldError(pointer: prefix + "/seq", detail: "repeats the seq of /events/\(first)"))
            }
        }
        return errors
    }

    /// The size of the parameters as they are stored (`EventBody.fieldsJSON`).
    static func encodedSize(_ parameters: [String: JSONValue]) -> Int {
        JSONText.size(of: .object(parameters))
    }

    /// Reverse-DNS: two or more dot-separated labels of ASCII letters, digits and hyphens.
    static func isReverseDNS(_ value: String) -> Bool {
        let labels = value.split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && labels.allSatisfy { label in
            !label.isEmpty && label.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII && (scalar == "-" || scalar.properties.isAlphabetic || ("0"..."9").contains(scalar))
            }
        }
    }
}

/// What every text field must be: not blank (DESIGN §2) and free of U+0000, which PostgreSQL
/// cannot store in `text` or `jsonb` (it was a 500 before).
///
/// "Blank" is a string of nothing but the characters of ECMA-262's `\s`, the set JSON Schema's
/// `pattern` uses. The set is written out rather than taken from `Character.isWhitespace` or
/// Foundation's `.whitespacesAndNewlines`, which differ from it (U+0085 is whitespace there and
/// not in `\s`; U+FEFF is in `\s` and not there), so that a string passes here exactly when it
/// matches `pattern`, which `openapi.yaml` gives every text field. The empty string is blank
/// too (the length limits name it first).
public enum BlankText {
    /// No U+0000 anywhere, and at least one character outside `\s`, with `\s` spelled out because
    /// regex dialects disagree on it (Python's `re` counts U+001C–U+001F and U+0085, ECMA does not).
    public static let pattern = #"^[^\u0000]*[^\u0000\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff][^\u0000]*$"#

    /// Whether `value` holds no character outside ECMA-262's `\s`.
    public static func isBlank(_ value: some StringProtocol) -> Bool {
        value.unicodeScalars.allSatisfy(isBlank)
    }

    /// ECMA-262 `WhiteSpace` (TAB, VT, FF, ZWNBSP and the `Zs` category) and `LineTerminator`
    /// (LF, CR, LS, PS).
    public static func isBlank(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x20, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
            true
        default:
            false
        }
    }

    /// Whether `value` holds U+0000, which PostgreSQL refuses in `text` and `jsonb`.
    public static func containsNull(_ value: some StringProtocol) -> Bool {
        value.unicodeScalars.contains("\u{0}")
    }

    /// Whether any key or string anywhere in `value` holds U+0000.
    public static func containsNull(_ value: JSONValue) -> Bool {
        switch value {
        case .null, .bool, .number: false
        case .string(let string): containsNull(string)
        case .array(let values): values.contains(where: containsNull)
        case .object(let members): members.contains { containsNull($0.key) || containsNull($0.value) }
        }
    }
}

/// Accumulates violations so that one answer names every field at fault.
private struct Checker {
    var errors: [FieldError] = []

    mutating func fail(_ pointer: String, _ detail: String) {
        errors.append(FieldError(pointer: pointer, detail: detail))
    }

    /// A text field: within `range` code points, not blank, no U+0000; one error for it at most.
    mutating func text(_ value: String, _ range: ClosedRange<Int>, at pointer: String) {
        let count = value.unicodeScalars.count
        if count < range.lowerBound {
            fail(pointer, "must not be empty")
        } else if BlankText.isBlank(value) {
            fail(pointer, "must not be blank")
        } else if BlankText.containsNull(value) {
            fail(pointer, "must not contain U+0000")
        } else if count > range.upperBound {
            fail(pointer, "is \(count) code points long; at most \(range.upperBound) are allowed")
        }
    }

    mutating func optional(_ value: String?, _ range: ClosedRange<Int>, at pointer: String) {
        if let value { text(value, range, at: pointer) }
    }

    mutating func required(_ value: String?, _ range: ClosedRange<Int>, at pointer: String, because reason: String) {
        guard let value else {
            fail(pointer, "is required for \(reason)")
            return
        }
        text(value, range, at: pointer)
    }

    mutating func bundleId(_ value: String, at pointer: String = "/bundleId") {
        let before = errors.count
        text(value, Limits.bundleIdLength, at: pointer)
        if errors.count == before, !EventValidator.isReverseDNS(value) {
            fail(pointer, "must be a reverse-DNS name such as com.example.app (letters, digits, hyphens, dot-separated)")
        }
    }

    /// A phrase is blank when it is blank text or when it normalizes to nothing ("?!", " … ").
    mutating func phrase(_ value: String, at pointer: String) {
        if BlankText.isBlank(value)
            || value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
            || PhraseNormalizer.normalize(value).isEmpty {
            fail(pointer, "must not be blank")
        } else {
            text(value, Limits.phraseLength, at: pointer)
        }
    }
}

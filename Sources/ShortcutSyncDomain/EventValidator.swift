import Foundation

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
            var visitor = DonationCheck(donation: donation, check: consume check)
            Donation.visitFields(&visitor)
            check = visitor.check
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
            check.text(added.title, Limits.titleLength, at: "/title", readByPeople: true)
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
        case .signedOut:
            break  // no fields; a push may not carry it (`violations(ofBatch:)`), an archive may
        case .learningForgotten(let forgotten):
            if case .shortcut(let shortcut) = forgotten.scope {
                check.bundleId(shortcut.bundleId)
                check.text(shortcut.identifier, Limits.identifierLength, at: "/identifier")
            }
        case .learningPaused:
            break  // its scope is the account or a device, which the store checks is one of the account's
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
        seenIds.reserveCapacity(events.count)
        seenSeqs.reserveCapacity(events.count)
        // Each event's pointer is written only for an error: it was a string made for every event.
        for (index, event) in events.enumerated() {
            func pointer(_ field: String = "") -> String { "/events/\(index)" + field }
            if !event.type.isPushed {
                errors.append(FieldError(pointer: pointer("/type"), detail: "\(event.type.rawValue) is written by the service; a device cannot push it"))
            }
            let own = violations(of: event)
            if !own.isEmpty { errors += own.map { $0.nested(under: pointer()) } }
            if let first = seenIds.updateValue(index, forKey: event.id) {
                errors.append(FieldError(pointer: pointer("/id"), detail: "repeats the id of /events/\(first)"))
            }
            if let first = seenSeqs.updateValue(index, forKey: event.seq) {
                errors.append(FieldError(pointer: pointer("/seq"), detail: "repeats the seq of /events/\(first)"))
            }
        }
        return errors
    }

    /// Reverse-DNS: two or more dot-separated labels of ASCII letters, digits and hyphens.
    /// Read byte by byte: a byte above 0x7F is part of a character that is not ASCII.
    static func isReverseDNS(_ value: String) -> Bool {
        var labels = 1
        var labelLength = 0
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "."):
                guard labelLength > 0 else { return false }
                labels += 1
                labelLength = 0
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"):
                labelLength += 1
            default:
                return false
            }
        }
        return labels >= 2 && labelLength > 0
    }
}

extension EventValidator {
    /// What is wrong with a shortcut's key given apart from an event (a query's `bundleId` and
    /// `identifier`): the rules a donation's would meet, at `/bundleId` and `/identifier`.
    public static func violations(bundleId: String, identifier: String) -> [FieldError] {
        var check = Checker()
        check.bundleId(bundleId)
        check.text(identifier, Limits.identifierLength, at: "/identifier")
        return check.errors
    }
}

/// Accumulates violations so that one answer names every field at fault.
private struct Checker {
    var errors: [FieldError] = []

    mutating func fail(_ pointer: @autoclosure () -> String, _ detail: String) {
        errors.append(FieldError(pointer: pointer(), detail: detail))
    }

    /// A text field: within `range` code points, not blank, no U+0000, and no control character
    /// at all when a person reads it (`readByPeople`: a title, a phrase); one error for it at most.
    mutating func text(_ value: String, _ range: ClosedRange<Int>, at pointer: @autoclosure () -> String, readByPeople: Bool = false) {
        let (count, hasNull) = BlankText.codePointsAndNull(value)
        if count < range.lowerBound {
            fail(pointer(), "must not be empty")
        } else if BlankText.isBlank(value) {
            fail(pointer(), "must not be blank")
        } else if hasNull {
            fail(pointer(), "must not contain U+0000")
        } else if readByPeople, let control = ControlCharacters.first(in: value) {
            fail(pointer(), "must not contain a control character (\(ControlCharacters.escaped(String(control))))")
        } else if count > range.upperBound {
            fail(pointer(), "is \(count) code points long; at most \(range.upperBound) are allowed")
        }
    }

    mutating func optional(_ value: String?, _ range: ClosedRange<Int>, at pointer: @autoclosure () -> String, readByPeople: Bool = false) {
        if let value { text(value, range, at: pointer(), readByPeople: readByPeople) }
    }

    mutating func required(_ value: String?, _ range: ClosedRange<Int>, at pointer: @autoclosure () -> String, because reason: String,
                           readByPeople: Bool = false) {
        guard let value else {
            fail(pointer(), "is required for \(reason)")
            return
        }
        text(value, range, at: pointer(), readByPeople: readByPeople)
    }

    mutating func bundleId(_ value: String, at pointer: @autoclosure () -> String = "/bundleId") {
        let before = errors.count
        text(value, Limits.bundleIdLength, at: pointer())
        if errors.count == before, !EventValidator.isReverseDNS(value) {
            fail(pointer(), "must be a reverse-DNS name such as com.example.app (letters, digits, hyphens, dot-separated)")
        }
    }

    /// A phrase is blank when it is blank text or when it normalizes to nothing ("?!", " … ").
    mutating func phrase(_ value: String, at pointer: @autoclosure () -> String) {
        if BlankText.isBlank(value)
            || value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
            || PhraseNormalizer.normalize(value).isEmpty {
            fail(pointer(), "must not be blank")
        } else {
            text(value, Limits.phraseLength, at: pointer(), readByPeople: true)
        }
    }
}

/// Checks each field of a donation against the limit its declaration states (`Donation.visitFields`),
/// at `/name`. The pointer is built only for a violation: most fields of most events have none.
private struct DonationCheck: DonationFieldVisitor {
    let donation: Donation
    var check: Checker

    @inline(__always)
    mutating func bundleId(_ label: DonationField.Label, _ access: DonationField.Access<String>) {
        check.bundleId(access.get(donation), at: "/" + label.name)
    }

    @inline(__always)
    mutating func text(_ label: DonationField.Label, _ access: DonationField.Access<String>, length: ClosedRange<Int>) {
        check.text(access.get(donation), length, at: "/" + label.name, readByPeople: label.readByPeople)
    }

    /// A field required of one kind is not looked at in a donation of another (DESIGN §2 names
    /// only the one required).
    @inline(__always)
    mutating func optionalText(_ label: DonationField.Label, _ access: DonationField.Access<String?>, length: ClosedRange<Int>,
                               requiredFor: DonationKind?) {
        if let kind = requiredFor {
            if donation.kind == kind {
                check.required(access.get(donation), length, at: "/" + label.name, because: "kind \(kind.rawValue)", readByPeople: label.readByPeople)
            }
        } else {
            check.optional(access.get(donation), length, at: "/" + label.name, readByPeople: label.readByPeople)
        }
    }

    @inline(__always)
    mutating func phrase(_ label: DonationField.Label, _ access: DonationField.Access<String?>) {
        if let phrase = access.get(donation) { check.phrase(phrase, at: "/" + label.name) }
    }

    /// Any kind read is one of `DonationKind`'s.
    @inline(__always)
    mutating func kind(_ label: DonationField.Label, _ access: DonationField.Access<DonationKind>) {}

    @inline(__always)
    mutating func texts(_ label: DonationField.Label, _ access: DonationField.Access<[String]>, maxCount: Int, length: ClosedRange<Int>) {
        let values = access.get(donation)
        if values.count > maxCount {
            check.fail("/" + label.name, "has \(values.count) \(label.name); at most \(maxCount) are allowed")
        }
        for (index, value) in values.enumerated() {
            check.text(value, length, at: "/\(label.name)/\(index)")
        }
    }

    @inline(__always)
    mutating func flag(_ label: DonationField.Label, _ access: DonationField.Access<Bool>, absent: Bool) {}

    @inline(__always)
    mutating func object(_ label: DonationField.Label, _ access: DonationField.Access<[String: JSONValue]>, maxBytes: Int) {
        let (size, hasNull) = JSONText.measure(.object(access.get(donation)))
        if size > maxBytes {
            check.fail("/" + label.name, "is \(size) bytes encoded; at most \(maxBytes) are allowed")
        } else if hasNull {
            check.fail("/" + label.name, "must not contain U+0000 in any key or string")
        }
    }

    @inline(__always)
    mutating func integer(_ label: DonationField.Label, _ access: DonationField.Access<Int?>, range: ClosedRange<Int>,
                          meaning: String, unit: String) {
        if let value = access.get(donation), !range.contains(value) {
            check.fail("/" + label.name, "is \(value); \(meaning) is \(Self.signed(range.lowerBound)) to \(Self.signed(range.upperBound)) \(unit)")
        }
    }

    @inline(__always)
    mutating func place(_ label: DonationField.Label, _ access: DonationField.Access<String?>) {
        if let token = access.get(donation), !PlaceToken.isValid(token) {
            check.fail("/" + label.name, PlaceToken.notAToken)
        }
    }

    /// An integer as a person reads it, with a minus sign rather than a hyphen.
    private static func signed(_ value: Int) -> String {
        value < 0 ? "\u{2212}\(-value)" : "\(value)"
    }

}

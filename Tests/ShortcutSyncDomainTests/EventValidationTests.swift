import Foundation
import Testing
import ShortcutSyncDomain
import ShortcutSyncTestSupport

@Suite struct EventValidationTests {
    static let now: Int64 = 1_763_712_000_000
    let validator = EventValidator(nowMillis: now)

    func event(_ body: EventBody, seq: Int64 = 1, wall: Int64 = now) -> Event {
        Event(seq: seq, hlc: HLCTimestamp(wallMillis: wall), body: body)
    }

    func donation(_ change: (inout Donation) -> Void = { _ in }) -> Event {
        var donation = Donation(bundleId: "com.example.soup", identifier: "tomato", kind: .userActivity, activityType: "com.example.order", title: "Tomato soup")
        change(&donation)
        return event(.donation(donation))
    }

    func pointers(_ event: Event) -> [String] {
        validator.violations(of: event).map(\.pointer)
    }

    @Test func aValidDonationHasNoViolations() {
        #expect(validator.violations(of: donation()).isEmpty)
    }

    /// `parameters` may take 16 KiB as stored: `{"note":"…"}` is 11 bytes around the note, a `"`
    /// is stored as two bytes and `é` as two.
    @Test func parametersAreMeasuredAsTheyAreStored() {
        func parameters(_ note: String) -> Event { donation { $0.parameters = ["note": .string(note)] } }
        let limit = Limits.maxParametersBytes
        #expect(pointers(parameters(String(repeating: "a", count: limit - 11))).isEmpty)
        #expect(pointers(parameters(String(repeating: "a", count: limit - 10))) == ["/parameters"])
        #expect(pointers(parameters(String(repeating: "\"", count: (limit - 11) / 2))).isEmpty)
        #expect(pointers(parameters(String(repeating: "\"", count: (limit - 11) / 2 + 1))) == ["/parameters"])
        #expect(pointers(parameters(String(repeating: "é", count: (limit - 11) / 2 + 1))) == ["/parameters"])
        let detail = validator.violations(of: parameters(String(repeating: "a", count: limit - 10))).first?.detail
        #expect(detail == "is \(limit + 1) bytes encoded; at most \(limit) are allowed")
    }

    @Test func everyDonationLimitNamesItsField() {
        #expect(pointers(donation { $0.bundleId = "" }) == ["/bundleId"])
        #expect(pointers(donation { $0.bundleId = "soup" }) == ["/bundleId"])
        #expect(pointers(donation { $0.bundleId = "com..soup" }) == ["/bundleId"])
        #expect(pointers(donation { $0.bundleId = "com.example." + String(repeating: "a", count: 250) }) == ["/bundleId"])
        #expect(pointers(donation { $0.identifier = String(repeating: "x", count: 257) }) == ["/identifier"])
        #expect(pointers(donation { $0.identifier = String(repeating: "x", count: 256) }).isEmpty)
        #expect(pointers(donation { $0.activityType = nil }) == ["/activityType"])
        #expect(pointers(donation { $0.kind = .intent }) == ["/intentType"])
        #expect(pointers(donation { $0.title = "" }) == ["/title"])
        #expect(pointers(donation { $0.subtitle = String(repeating: "s", count: 201) }) == ["/subtitle"])
        #expect(pointers(donation { $0.groupIdentifier = "" }) == ["/groupIdentifier"])
        #expect(pointers(donation { $0.suggestedInvocationPhrase = "   " }) == ["/suggestedInvocationPhrase"])
        #expect(pointers(donation { $0.keywords = (0..<21).map(String.init) }) == ["/keywords"])
        #expect(pointers(donation { $0.parameters = ["blob": .string(String(repeating: "p", count: 17_000))] }) == ["/parameters"])
    }

    @Test func titleLengthCountsCharactersNotBytes() {
        #expect(pointers(donation { $0.title = String(repeating: "汤", count: 200) }).isEmpty)
        #expect(pointers(donation { $0.title = String(repeating: "汤", count: 201) }) == ["/title"])
    }

    @Test func phrasesMustNotBeBlankNorLongerThan100Characters() {
        let id = UUID()
        #expect(pointers(event(.voiceShortcutUpdated(.init(voiceShortcutId: id, phrase: " \t ")))) == ["/phrase"])
        #expect(pointers(event(.voiceShortcutUpdated(.init(voiceShortcutId: id, phrase: "?!")))) == ["/phrase"])
        #expect(pointers(event(.voiceShortcutUpdated(.init(voiceShortcutId: id, phrase: String(repeating: "a", count: 101))))) == ["/phrase"])
        #expect(pointers(event(.voiceShortcutUpdated(.init(voiceShortcutId: id, phrase: String(repeating: "a", count: 100))))).isEmpty)
        let added = VoiceShortcutAdded(voiceShortcutId: id, phrase: "", bundleId: "x", identifier: "", title: "")
        #expect(pointers(event(.voiceShortcutAdded(added))) == ["/phrase", "/bundleId", "/identifier", "/title"])
    }

    @Test func deletionsNeedOneToAThousandValidIdentifiers() {
        #expect(pointers(event(.deletion(.init(bundleId: "com.example.soup", selector: .identifiers([]))))) == ["/identifiers"])
        let tooMany = (0...1000).map(String.init)
        #expect(pointers(event(.deletion(.init(bundleId: "com.example.soup", selector: .identifiers(tooMany))))) == ["/identifiers"])
        #expect(pointers(event(.deletion(.init(bundleId: "com.example.soup", selector: .identifiers(["a", ""]))))) == ["/identifiers/1"])
        #expect(pointers(event(.deletion(.init(bundleId: "com.example.soup", selector: .all)))).isEmpty)
    }

    @Test func appsReportedIsLimitedTo2000ValidBundleIds() {
        #expect(pointers(event(.appsReported(.init(installed: (0...2000).map { "com.example.app\($0)" })))) == ["/installed"])
        #expect(pointers(event(.appsReported(.init(installed: ["com.example.ok", "not a bundle"])))) == ["/installed/1"])
    }

    /// DESIGN §5: seq 1…2^53, `hlc.counter` 0…2^31−1, `wallMillis` ≥ 0; the extremes of
    /// Int64 are refused without arithmetic on them trapping.
    @Test func numbersOutsideTheirBoundsAreRefused() {
        let body = EventBody.voiceShortcutDeleted(VoiceShortcutDeleted(voiceShortcutId: UUID()))
        for seq: Int64 in [0, -1, (1 << 53) + 1, .max, .min] {
            #expect(pointers(event(body, seq: seq)) == ["/seq"], "seq \(seq)")
        }
        for seq: Int64 in [1, 1 << 53] {
            #expect(pointers(event(body, seq: seq)).isEmpty, "seq \(seq)")
        }
        for counter in [-1, Int(Int32.max) + 1, .max, .min] {
            let event = Event(seq: 1, hlc: HLCTimestamp(wallMillis: Self.now, counter: counter), body: body)
            #expect(pointers(event) == ["/hlc/counter"], "counter \(counter)")
        }
        #expect(pointers(Event(seq: 1, hlc: HLCTimestamp(wallMillis: Self.now, counter: Int(Int32.max)), body: body)).isEmpty)
        for wall: Int64 in [-1, .min, .max] {
            #expect(pointers(event(body, wall: wall)) == ["/hlc/wallMillis"], "wallMillis \(wall)")
        }
        let farFuture = EventValidator(nowMillis: .max)
        #expect(farFuture.violations(of: event(body, wall: .max)).map(\.pointer) == ["/hlc/wallMillis"])
    }

    @Test func clocksMoreThanFiveMinutesAheadAreRefused() {
        #expect(pointers(donation().with(wall: Self.now + 5 * 60 * 1000)).isEmpty)
        #expect(pointers(donation().with(wall: Self.now + 5 * 60 * 1000 + 1)) == ["/hlc/wallMillis"])
    }

    @Test func batchesAreLimitedAndMayNotRepeatIdsOrSeqs() {
        let one = donation()
        var sameSeq = donation()
        sameSeq.id = UUID()
        let errors = validator.violations(ofBatch: [one, one, sameSeq])
        #expect(errors.map(\.pointer) == ["/events/1/id", "/events/1/seq", "/events/2/seq"])
        #expect(validator.violations(ofBatch: []).map(\.pointer) == ["/events"])
        let tooMany = (1...501).map { seq in Event(seq: Int64(seq), hlc: HLCTimestamp(wallMillis: Self.now), body: .voiceShortcutDeleted(.init(voiceShortcutId: UUID()))) }
        #expect(validator.violations(ofBatch: tooMany).map(\.pointer) == ["/events"])
        let nested = validator.violations(ofBatch: [one, donation { $0.title = "" }.with(seq: 2)])
        #expect(nested.map(\.pointer) == ["/events/1/title"])
    }

    /// The rules' own words, read through `Unicode.Scalar`: what the validator's byte-by-byte reading
    /// must agree with.
    static func isReverseDNSAsWritten(_ value: String) -> Bool {
        let labels = value.split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && labels.allSatisfy { label in
            !label.isEmpty && label.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII && (scalar == "-" || scalar.properties.isAlphabetic || ("0"..."9").contains(scalar))
            }
        }
    }

    /// 20,000 random names of the characters that matter (dots, hyphens, letters and digits of
    /// ASCII and beyond, marks): a bundle id is refused as not reverse-DNS exactly when the rule
    /// as written says so.
    @Test func reverseDNSIsReadAsTheRuleIsWritten() {
        let alphabet: [String] = [".", ".", "-", "a", "Z", "q", "0", "9", "_", " ", "é", "ª", "ǅ", "Ⅻ", "٣", "\u{301}", "汤", "🍅", "/", "\u{0}"]
        var random = SeededGenerator(seed: 53)
        for _ in 0..<20_000 {
            let name = (0..<Int.random(in: 0...9, using: &random)).map { _ in alphabet.randomElement(using: &random)! }.joined()
            let refused = EventValidator.violations(bundleId: name, identifier: "x")
                .contains { $0.pointer == "/bundleId" && $0.detail.contains("reverse-DNS") }
            let (count, hasNull) = BlankText.codePointsAndNull(name)
            if count >= 1, !BlankText.isBlank(name), !hasNull {
                #expect(refused == !Self.isReverseDNSAsWritten(name), "\(name.debugDescription)")
            } else {
                #expect(!refused, "\(name.debugDescription): another rule names it first")
            }
        }
    }

    /// The length and U+0000 checks count code points in one pass over the UTF-8: the same count
    /// and the same answer as `unicodeScalars`.
    @Test func codePointsAndNullAreCountedAsUnicodeScalarsCountThem() {
        let alphabet: [String] = ["a", " ", "é", "汤", "🍅", "\u{0}", "\u{301}", "\r\n", "\u{7F}", "\u{80}", "\u{FFFF}"]
        var random = SeededGenerator(seed: 59)
        for _ in 0..<10_000 {
            let text = (0..<Int.random(in: 0...40, using: &random)).map { _ in alphabet.randomElement(using: &random)! }.joined()
            let (count, hasNull) = BlankText.codePointsAndNull(text)
            #expect(count == text.unicodeScalars.count)
            #expect(hasNull == text.unicodeScalars.contains("\u{0}"))
        }
    }
}

extension Event {
    func with(wall: Int64) -> Event {
        var copy = self
        copy.hlc.wallMillis = wall
        return copy
    }

    func with(seq: Int64) -> Event {
        var copy = self
        copy.id = UUID()
        copy.seq = seq
        return copy
    }
}

import Foundation
import ShortcutSyncDomain
import Testing

/// No text field may be blank (DESIGN §2), "blank" meaning exactly what `openapi.yaml`'s pattern
/// means, and lengths count code points as the spec's `maxLength` does.
@Suite struct BlankFieldTests {
    static let now: Int64 = 1_763_712_000_000
    let validator = EventValidator(nowMillis: now)

    /// Blank in every way the spec knows: spaces, a tab and newline, and the wider Unicode spaces.
    static let blanks = ["   ", "\t\n", "\u{3000}", "\u{A0}\u{2009}", "\u{FEFF}", "\u{2028}\r\u{0B}\u{0C}"]

    func violations(_ body: EventBody) -> [FieldError] {
        validator.violations(of: Event(seq: 1, hlc: HLCTimestamp(wallMillis: Self.now), body: body))
    }

    func donation(_ change: (inout Donation) -> Void) -> EventBody {
        var donation = Donation(
            bundleId: "com.example.soup", identifier: "tomato", kind: .userActivity, activityType: "com.example.order",
            title: "Tomato soup", subtitle: "Hot", groupIdentifier: "soups", keywords: ["soup", "tomato", "lunch"])
        change(&donation)
        return .donation(donation)
    }

    @Test(arguments: blanks)
    func everyBlankDonationFieldIsNamedByItsPointer(blank: String) {
        let cases: [(pointer: String, body: EventBody)] = [
            ("/bundleId", donation { $0.bundleId = blank }),
            ("/identifier", donation { $0.identifier = blank }),
            ("/activityType", donation { $0.activityType = blank }),
            ("/intentType", donation { $0.kind = .intent; $0.intentType = blank }),
            ("/title", donation { $0.title = blank }),
            ("/subtitle", donation { $0.subtitle = blank }),
            ("/groupIdentifier", donation { $0.groupIdentifier = blank }),
            ("/keywords/2", donation { $0.keywords[2] = blank }),
            ("/suggestedInvocationPhrase", donation { $0.suggestedInvocationPhrase = blank }),
        ]
        for (pointer, body) in cases {
            #expect(violations(body) == [FieldError(pointer: pointer, detail: "must not be blank")], "\(pointer)")
        }
    }

    @Test(arguments: blanks)
    func everyBlankFieldOfTheOtherEventsIsNamedByItsPointer(blank: String) {
        let id = UUID()
        let cases: [(pointer: String, body: EventBody)] = [
            ("/identifiers/1", .deletion(Deletion(bundleId: "com.example.soup", selector: .identifiers(["tomato", blank])))),
            ("/groupIdentifier", .deletion(Deletion(bundleId: "com.example.soup", selector: .groupIdentifier(blank)))),
            ("/bundleId", .deletion(Deletion(bundleId: blank, selector: .all))),
            ("/installed/0", .appsReported(AppsReported(installed: [blank, "com.example.soup"]))),
            ("/title", .voiceShortcutAdded(VoiceShortcutAdded(voiceShortcutId: id, phrase: "order soup", bundleId: "com.example.soup", identifier: "tomato", title: blank))),
            ("/identifier", .voiceShortcutAdded(VoiceShortcutAdded(voiceShortcutId: id, phrase: "order soup", bundleId: "com.example.soup", identifier: blank, title: "Tomato soup"))),
            ("/phrase", .voiceShortcutAdded(VoiceShortcutAdded(voiceShortcutId: id, phrase: blank, bundleId: "com.example.soup", identifier: "tomato", title: "Tomato soup"))),
            ("/phrase", .voiceShortcutUpdated(VoiceShortcutUpdated(voiceShortcutId: id, phrase: blank))),
        ]
        for (pointer, body) in cases {
            #expect(violations(body) == [FieldError(pointer: pointer, detail: "must not be blank")], "\(pointer)")
        }
    }

    @Test func aBatchNamesTheBlankFieldUnderItsEvent() {
        let events = [
            Event(seq: 1, hlc: HLCTimestamp(wallMillis: Self.now), body: donation { _ in }),
            Event(seq: 2, hlc: HLCTimestamp(wallMillis: Self.now), body: donation { $0.keywords[2] = " " }),
        ]
        #expect(validator.violations(ofBatch: events).map(\.pointer) == ["/events/1/keywords/2"])
    }

    @Test func blankIsExactlyECMAScriptsWhitespaceSet() {
        let ecmaWhitespace: [UInt32] = [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0xA0, 0x1680] + Array(0x2000...0x200A)
            + [0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF]
        for value in ecmaWhitespace {
            #expect(BlankText.isBlank(Unicode.Scalar(value)!), "U+\(String(value, radix: 16))")
        }
        // What other definitions of whitespace count, and ECMA-262's `\s` (so the spec) does not.
        for value: UInt32 in [0x1C, 0x1D, 0x1E, 0x1F, 0x85, 0x180E, 0x200B, 0x2060] {
            #expect(!BlankText.isBlank(Unicode.Scalar(value)!), "U+\(String(value, radix: 16))")
        }
        #expect(BlankText.isBlank(""))
        #expect(!BlankText.isBlank(" \u{3000}x\t"))
    }

    @Test func textWithSomethingInItIsNotBlank() {
        #expect(violations(donation { $0.title = " soup "; $0.keywords = ["\u{3000}lunch"]; $0.identifier = "\u{85}" }).isEmpty)
    }

    @Test func keywordsAreOneTo200CodePoints() {
        #expect(violations(donation { $0.keywords = [String(repeating: "k", count: 200)] }).isEmpty)
        #expect(violations(donation { $0.keywords = ["soup", String(repeating: "k", count: 201)] }).map(\.pointer) == ["/keywords/1"])
        #expect(violations(donation { $0.keywords = ["soup", ""] }) == [FieldError(pointer: "/keywords/1", detail: "must not be empty")])
    }

    @Test func lengthsCountCodePointsAsTheSpecDoes() {
        // "é" as `e` and a combining acute accent: one character, two code points.
        let decomposed = "e\u{301}"
        #expect(violations(donation { $0.title = String(repeating: decomposed, count: 100) }).isEmpty)
        #expect(violations(donation { $0.title = String(repeating: decomposed, count: 101) }).map(\.pointer) == ["/title"])
        // A flag is one character of two code points.
        #expect(violations(donation { $0.identifier = String(repeating: "🇫🇷", count: 129) }).map(\.pointer) == ["/identifier"])
        #expect(violations(.voiceShortcutUpdated(.init(voiceShortcutId: UUID(), phrase: String(repeating: decomposed, count: 51))))
            .map(\.pointer) == ["/phrase"])
    }

    @Test func phrasesThatNormalizeToNothingStayBlank() {
        for phrase in ["?!", " … ", "．", "‼", "\u{FEFF}", "\u{85}"] {
            #expect(violations(.voiceShortcutUpdated(.init(voiceShortcutId: UUID(), phrase: phrase))).map(\.detail) == ["must not be blank"], "\(phrase.unicodeScalars.map { String($0.value, radix: 16) })")
        }
    }

    /// PostgreSQL cannot store U+0000 in `text` or `jsonb`: refused with a pointer, not a 500.
    @Test func noTextFieldNorParameterMayHoldU0000() {
        let nul = "soup\u{0}"
        #expect(violations(donation { $0.title = nul }) == [FieldError(pointer: "/title", detail: "must not contain U+0000")])
        #expect(violations(donation { $0.keywords[1] = nul }).map(\.pointer) == ["/keywords/1"])
        #expect(violations(.voiceShortcutUpdated(.init(voiceShortcutId: UUID(), phrase: nul))).map(\.pointer) == ["/phrase"])
        #expect(violations(.deletion(Deletion(bundleId: "com.example.soup", selector: .identifiers([nul])))).map(\.pointer) == ["/identifiers/0"])
        #expect(violations(donation { $0.parameters = ["size": .object(["name": .array([.string(nul)])])] }).map(\.pointer) == ["/parameters"])
        #expect(violations(donation { $0.parameters = [nul: .null] }).map(\.pointer) == ["/parameters"])
        #expect(violations(donation { $0.parameters = ["size": .string("large"), "hot": .bool(true)] }).isEmpty)
    }

    /// `openapi.yaml` gives every plain text field this very pattern, and the texts a person reads
    /// `ControlCharacters.textPattern`, so spec and code agree.
    @Test func theSpecUsesTheSamePattern() throws {
        let spec = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/ShortcutSyncAPI/openapi.yaml")
        let text = try String(contentsOf: spec, encoding: .utf8)
        let declaration = "pattern: '\(BlankText.pattern)'"
        // Identifier and Keyword; Title and the device name are read by people.
        #expect(text.components(separatedBy: declaration).count - 1 == 2)
        #expect(text.components(separatedBy: "pattern: '\(ControlCharacters.textPattern)'").count - 1 == 2)
    }
}

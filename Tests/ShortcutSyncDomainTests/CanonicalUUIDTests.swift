import Foundation
import ShortcutSyncDomain
import ShortcutSyncTestSupport
import Testing

/// `UUID(canonical:)` reads what Foundation reads from a UUID's canonical text, and refuses every
/// other text, including those Foundation's `sscanf` takes on Linux.
@Suite struct CanonicalUUIDTests {
    /// The canonical form, as a regular expression: the test's own statement of it.
    static func isCanonical(_ text: String) -> Bool {
        text.wholeMatch(of: /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/) != nil
    }

    @Test func everyUUIDsTextReadsBackInEitherCase() {
        var random = SeededGenerator(seed: 11)
        for _ in 0..<2_000 {
            let uuid = UUID(uuid: (UInt8.random(in: 0...255, using: &random), UInt8.random(in: 0...255, using: &random),
                                   UInt8.random(in: 0...255, using: &random), UInt8.random(in: 0...255, using: &random),
                                   UInt8.random(in: 0...255, using: &random), UInt8.random(in: 0...255, using: &random),
                                   UInt8.random(in: 0...255, using: &random), UInt8.random(in: 0...255, using: &random),
                                   UInt8.random(in: 0...255, using: &random), UInt8.random(in: 0...255, using: &random),
                                   UInt8.random(in: 0...255, using: &random), UInt8.random(in: 0...255, using: &random),
                                   UInt8.random(in: 0...255, using: &random), UInt8.random(in: 0...255, using: &random),
                                   UInt8.random(in: 0...255, using: &random), UInt8.random(in: 0...255, using: &random)))
            let mixed = String(uuid.uuidString.map { Bool.random(using: &random) ? Character($0.lowercased()) : $0 })
            #expect(UUID(canonical: uuid.uuidString) == uuid)
            #expect(UUID(canonical: uuid.uuidString.lowercased()) == uuid)
            #expect(UUID(canonical: mixed) == uuid, "\(mixed)")
            #expect(UUID(canonical: mixed[...]) == uuid, "a substring reads as its string")
        }
    }

    /// Texts near the canonical form (a character changed, dropped or added): each is read as
    /// Foundation reads it when it has the canonical form, and refused otherwise.
    @Test func aTextIsReadOnlyInTheCanonicalFormAndThenAsFoundationReadsIt() {
        var random = SeededGenerator(seed: 12)
        let alphabet = Array("0123456789abcdefABCDEF-+ xXgG\u{0}é")
        var canonical = 0, refused = 0
        for _ in 0..<20_000 {
            var characters = Array(UUID().uuidString.map { Bool.random(using: &random) ? Character($0.lowercased()) : $0 })
            for _ in 0..<Int.random(in: 0...2, using: &random) {
                switch Int.random(in: 0..<6, using: &random) {
                case 0: characters.remove(at: Int.random(in: 0..<characters.count, using: &random))
                case 1: characters.insert(alphabet.randomElement(using: &random)!, at: Int.random(in: 0...characters.count, using: &random))
                default: characters[Int.random(in: 0..<characters.count, using: &random)] = alphabet.randomElement(using: &random)!
                }
            }
            let text = String(characters)
            if Self.isCanonical(text) {
                canonical += 1
                #expect(UUID(canonical: text) != nil && UUID(canonical: text) == UUID(uuidString: text), "\(text.debugDescription)")
            } else {
                refused += 1
                #expect(UUID(canonical: text) == nil, "\(text.debugDescription)")
            }
        }
        #expect(canonical > 2_000 && refused > 2_000, "both kinds were tried: \(canonical) canonical, \(refused) not")
    }

    /// What Foundation takes on Linux and reads as another UUID, or as one at all.
    @Test func aSignASpaceOrAPrefixInAGroupIsRefused() {
        for text in ["-621E1F8-C36C-495A-93FC-0C247A3E6E5F", "+621E1F8-C36C-495A-93FC-0C247A3E6E5F", " 621E1F8-C36C-495A-93FC-0C247A3E6E5F",
                     "0x21E1F8-C36C-495A-93FC-0C247A3E6E5F", "E621E1F8-+36C-495A-93FC-0C247A3E6E5F", "E621E1F8-C36C-495A-93FC-0C247A3E6E-F",
                     "E621E1F8-C36C-495A-93FC-0C247A3E6E5F\u{0}", "", "E621E1F8C36C495A93FC0C247A3E6E5F"] {
            #expect(UUID(canonical: text) == nil, "\(text.debugDescription)")
        }
    }
}

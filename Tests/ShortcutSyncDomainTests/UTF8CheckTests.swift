@testable import ShortcutSyncDomain
import Testing

/// `UTF8Check`, which the push reader uses where it used to make a `String` of each string's
/// bytes, says what the standard library's validation says.
@Suite struct UTF8CheckTests {
    static func expectSame(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let ours = bytes.withUnsafeBytes { UTF8Check.isValid($0) }
        let standard = String(validating: bytes, as: UTF8.self) != nil
        #expect(ours == standard, "\(bytes.map { String($0, radix: 16) })", sourceLocation: sourceLocation)
    }

    /// Every sequence of one and two bytes, and every lead byte of a longer sequence with every
    /// second byte and the edges of the range the bytes after it must be in.
    @Test func everyShortSequenceIsJudgedAsTheStandardLibraryJudgesIt() {
        for first in UInt8.min...UInt8.max {
            Self.expectSame([first])
            for second in UInt8.min...UInt8.max {
                Self.expectSame([first, second])
            }
        }
        let edges: [UInt8] = [0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0]
        for lead in UInt8(0xE0)...0xFF {
            for second in UInt8.min...UInt8.max {
                for third in edges {
                    Self.expectSame([lead, second, third])
                    Self.expectSame([UInt8(ascii: "a"), lead, second, third, UInt8(ascii: "b")])
                    for fourth in edges { Self.expectSame([lead, second, third, fourth]) }
                }
            }
        }
    }

    /// Random texts of valid characters of every length in UTF-8, with a byte changed, left out
    /// or added at random in some of them.
    @Test func randomTextsAreJudgedAsTheStandardLibraryJudgesThem() {
        var generator = SystemRandomNumberGenerator()
        let ranges: [ClosedRange<UInt32>] = [0x20...0x7E, 0x80...0x7FF, 0x800...0xD7FF, 0xE000...0xFFFF, 0x10000...0x10FFFF]
        var invalid = 0
        for _ in 0..<20_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...12, using: &generator) {
                let scalar = Unicode.Scalar(UInt32.random(in: ranges.randomElement(using: &generator)!, using: &generator))!
                bytes.append(contentsOf: String(scalar).utf8)
            }
            if !bytes.isEmpty, Bool.random(using: &generator) {
                let place = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[place] = UInt8.random(in: .min ... .max, using: &generator)
                case 1: bytes.remove(at: place)
                default: bytes.insert(UInt8.random(in: 0x80 ... .max, using: &generator), at: place)
                }
            }
            if String(validating: bytes, as: UTF8.self) == nil { invalid += 1 }
            Self.expectSame(bytes)
        }
        #expect(invalid > 3_000)
    }
}

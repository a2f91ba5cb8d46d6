import Foundation

extension UUID {
    /// The UUID that `text` writes in the canonical form, and only in it: 36 characters, hex
    /// digits of either case in groups of 8, 4, 4, 4 and 12, joined by hyphens.
    ///
    /// Foundation's `UUID(uuidString:)` on Linux reads each group with `sscanf`, which also takes
    /// a sign, spaces or `0x` inside a group: it read "-621E1F8-…" as FA21E1F8-… and
    /// " 621E1F8-…" as 621E1F08-…, so a client's malformed id became another one. Read byte by
    /// byte here, such text is refused, and it takes a quarter of the time (no `sscanf`: 100–120
    /// against 440–490 ns a UUID, measured with `swiftc -O`).
    public init?(canonical text: String) {
        self.init(canonicalUTF8: text.utf8)
    }

    /// As `init(canonical:)` of a `String`.
    public init?(canonical text: Substring) {
        self.init(canonicalUTF8: text.utf8)
    }

    /// As `init(canonical:)` of the UTF-8 of a string (the push reader's, `PushJSON`).
    init?(canonicalBytes text: UnsafeRawBufferPointer) {
        self.init(canonicalUTF8: text)
    }

    /// Generic, but reached only through the three above: specialized here, whatever module calls them.
    private init?(canonicalUTF8 text: some Sequence<UInt8>) {
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let read = withUnsafeMutableBytes(of: &uuid) { bytes -> Bool in
            var position = 0, written = 0
            var high: UInt8?
            for character in text {
                defer { position += 1 }
                if position == 8 || position == 13 || position == 18 || position == 23 {
                    guard character == UInt8(ascii: "-") else { return false }
                    continue
                }
                guard position < 36, let nibble = character.hexDigitValue else { return false }
                if let first = high {
                    bytes[written] = first << 4 | nibble
                    written += 1
                    high = nil
                } else {
                    high = nibble
                }
            }
            return position == 36
        }
        guard read else { return nil }
        self.init(uuid: uuid)
    }
}

extension UInt8 {
    /// The value of this byte as an ASCII hex digit of either case (nil for any other byte): the
    /// readers of a client's text (`UUID(canonical:)`, `JSONParser`'s `\u` escapes) share it.
    var hexDigitValue: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): self - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

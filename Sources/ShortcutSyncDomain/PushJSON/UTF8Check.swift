/// Whether bytes are valid UTF-8, as the Unicode standard defines it (its table 3-7,
/// "well-formed UTF-8 byte sequences"): no overlong forms, no surrogates, nothing past U+10FFFF.
///
/// The push reader checks a string's bytes with it where it used to make a `String` of them:
/// it makes a `String` only of the values an event keeps, later. `UTF8CheckTests` holds it to
/// the standard library's own validation on random bytes.
enum UTF8Check {
    static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        var index = 0
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            // The range of the byte after the lead; the bytes after that are 0x80...0xBF.
            let length: Int
            let second: ClosedRange<UInt8>
            switch lead {
            case 0xC2...0xDF: (length, second) = (2, 0x80...0xBF)
            case 0xE0: (length, second) = (3, 0xA0...0xBF)
            case 0xE1...0xEC, 0xEE...0xEF: (length, second) = (3, 0x80...0xBF)
            case 0xED: (length, second) = (3, 0x80...0x9F)
            case 0xF0: (length, second) = (4, 0x90...0xBF)
            case 0xF1...0xF3: (length, second) = (4, 0x80...0xBF)
            case 0xF4: (length, second) = (4, 0x80...0x8F)
            default: return false
            }
            guard count - index >= length, second.contains(bytes[index + 1]) else { return false }
            for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 {
                return false
            }
            index += length
        }
        return true
    }
}

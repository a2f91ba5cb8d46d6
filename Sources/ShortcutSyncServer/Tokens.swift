import Crypto
import ExtrasBase64
import Foundation

/// Bearer tokens: 256 random bits, shown once, stored only as a SHA-256 hash.
public enum Tokens {
    public enum Kind: String, Sendable {
        case account = "ssa"
        case device = "ssd"
        case admin = "ssx"
    }

    /// A new token of `kind`, e.g. `ssd_` followed by 43 base64url characters.
    public static func make(_ kind: Kind) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return kind.rawValue + "_" + base64URL(bytes)
    }

    /// Whether `token` has the exact shape of one `make(kind)` makes: its kind's prefix, `_`, and
    /// 43 base64url characters. Anything else is refused without a lookup.
    public static func hasShape(_ token: String, of kind: Kind) -> Bool {
        let bytes = Array(token.utf8), prefix = Array((kind.rawValue + "_").utf8)
        guard bytes.count == prefix.count + 43, bytes.starts(with: prefix) else { return false }
        return bytes[prefix.count...].allSatisfy { byte in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
    }

    /// The hash under which a token is stored and looked up.
    public static func hash(_ token: String) -> [UInt8] {
        Array(SHA256.hash(data: Data(token.utf8)))
    }

    /// Compares two tokens without leaking where they differ through timing.
    public static func matches(_ token: String, hash expected: [UInt8]) -> Bool {
        let actual = hash(token)
        guard actual.count == expected.count else { return false }
        return zip(actual, expected).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// `bytes` in base64url without padding (RFC 4648 §5): what tokens and pull cursors are made of.
    static func base64URL(_ bytes: [UInt8]) -> String {
        Base64.encodeToString(bytes: bytes, options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }
}

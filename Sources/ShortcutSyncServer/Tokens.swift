import Crypto
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

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

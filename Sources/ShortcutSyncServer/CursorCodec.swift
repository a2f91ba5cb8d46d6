import Crypto
import ExtrasBase64
import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore
import Synchronization

/// Turns pull cursors into the opaque text devices hand back, and refuses any text it did not make.
///
/// The text is `3.<payload>.<mac>` in base64url: the payload (`PullCursor.payload`) names the
/// epoch, account, device, the device's apps version, the account version and the history it
/// belongs to (a cursor of `3.` made before it had one reads without, and resets), and for a page
/// that stopped short (`more: true`) where it stopped; the mac is the first 16 bytes of its HMAC-SHA256 under the
/// database's `cursor_signing` key. A cursor of another account or device is refused by the
/// store, a changed or made-up one here, and so is one of an older format (`2.`, before pulls
/// were paged): either way the device gets the whole view (`reset: true`).
struct CursorCodec: Sendable {
    /// The longest text this codec accepts. The longest it makes is 2,079 bytes: a page that
    /// stopped at a shortcut with a 255-character bundle id and an identifier of 256 code points
    /// of 4 bytes each, every number at its widest, the history's too (`CursorCodecTests` makes
    /// it); a complete cursor is under 200.
    static let maximumTextLength = 2_560
    static let format = "3"

    let key: [UInt8]

    func text(_ cursor: PullCursor) -> String {
        let payload = cursor.payload
        return Self.format + "." + Tokens.base64URL(payload) + "." + Tokens.base64URL(mac(payload))
    }

    /// The cursor, or nil for text this service did not make (or made in another format).
    func cursor(_ text: String) -> PullCursor? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard text.utf8.count <= Self.maximumTextLength, parts.count == 3, parts[0] == Self.format,
              let payload = Self.bytes(base64URL: parts[1]), let mac = Self.bytes(base64URL: parts[2]),
              Self.constantTimeEqual(mac, self.mac(payload)) else { return nil }
        return PullCursor(payload: payload)
    }

    private func mac(_ payload: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: payload, using: SymmetricKey(data: key))).prefix(16).map { $0 }
    }

    /// The bytes of base64url text without padding (`Tokens.base64URL`'s), or nil for text that is not.
    static func bytes(base64URL text: Substring) -> [UInt8]? {
        try? Base64.decode(bytes: text.utf8, options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }

    private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

import Crypto
import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore
import Synchronization

/// Turns pull cursors into the opaque text devices hand back, and refuses any text it did not make.
///
/// The text is `3.<payload>.<mac>` in base64url: the payload names the epoch, account, device,
/// the device's apps version and the account version, and for a page that stopped short
/// (`more: true`) where it stopped; the mac is the first 16 bytes of its HMAC-SHA256 under the
/// database's `cursor_signing` key. A cursor of another account or device is refused by the
/// store, a changed or made-up one here, and so is one of an older format (`2.`, before pulls
/// were paged): either way the device gets the whole view (`reset: true`).
struct CursorCodec: Sendable {
    /// The longest text this codec accepts. The longest it makes is 2,049 bytes: a page that
    /// stopped at a shortcut with a 255-character bundle id and an identifier of 256 code points
    /// of 4 bytes each, every number at its widest (`CursorCodecTests` makes it); a complete
    /// cursor is under 200.
    static let maximumTextLength = 2_560
    static let format = "3"

    let key: [UInt8]

    func text(_ cursor: PullCursor) -> String {
        var fields = [String(cursor.epoch), cursor.account.uuidString.lowercased(), cursor.device.uuidString.lowercased(),
                      String(cursor.appsVersion), String(cursor.version)]
        if let page = cursor.page {
            // The shortcut's key comes last, its bundle id's length first, so that neither needs escaping.
            let shortcut = page.shortcuts.key
            fields += [String(page.removalsAfter),
                       String(page.voiceShortcuts.version), page.voiceShortcuts.key?.uuidString.lowercased() ?? "",
                       String(page.shortcuts.version), shortcut.map { String($0.bundleId.utf8.count) } ?? "",
                       shortcut.map { $0.bundleId + $0.identifier } ?? ""]
        }
        let payload = Array(fields.joined(separator: ":").utf8)
        return Self.format + "." + Tokens.base64URL(payload) + "." + Tokens.base64URL(mac(payload))
    }

    /// The cursor, or nil for text this service did not make (or made in another format).
    func cursor(_ text: String) -> PullCursor? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard text.utf8.count <= Self.maximumTextLength, parts.count == 3, parts[0] == Self.format,
              let payload = Self.bytes(base64URL: parts[1]), let mac = Self.bytes(base64URL: parts[2]),
              Self.constantTimeEqual(mac, self.mac(payload)) else { return nil }
        let fields = payload.split(separator: UInt8(ascii: ":"), maxSplits: 10, omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        guard fields.count == 5 || fields.count == 11, let epoch = Int64(fields[0]),
              let account = UUID(uuidString: fields[1]), let device = UUID(uuidString: fields[2]),
              let appsVersion = Int64(fields[3]), let version = Int64(fields[4]), version >= 0 else { return nil }
        var cursor = PullCursor(epoch: epoch, account: account, device: device, appsVersion: appsVersion, version: version)
        guard fields.count == 11 else { return cursor }
        guard let removalsAfter = Int64(fields[5]), let voiceVersion = Int64(fields[6]), let shortcutVersion = Int64(fields[8]),
              voiceVersion <= version, shortcutVersion <= version, removalsAfter <= version else { return nil }
        let voiceKey: UUID?
        if fields[7].isEmpty {
            voiceKey = nil
        } else {
            guard let id = UUID(uuidString: fields[7]) else { return nil }
            voiceKey = id
        }
        let shortcutKey: ShortcutID?
        if fields[9].isEmpty {
            guard fields[10].isEmpty else { return nil }
            shortcutKey = nil
        } else {
            let key = Array(fields[10].utf8)
            guard let bundleLength = Int(fields[9]), (1..<key.count).contains(bundleLength) else { return nil }
            shortcutKey = ShortcutID(bundleId: String(decoding: key[..<bundleLength], as: UTF8.self),
                                     identifier: String(decoding: key[bundleLength...], as: UTF8.self))
        }
        cursor.page = PullPage(removalsAfter: removalsAfter,
                               shortcuts: PullPosition(version: shortcutVersion, key: shortcutKey),
                               voiceShortcuts: PullPosition(version: voiceVersion, key: voiceKey))
        return cursor
    }

    private func mac(_ payload: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: payload, using: SymmetricKey(data: key))).prefix(16).map { $0 }
    }

    private static func bytes(base64URL text: Substring) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).map(Array.init)
    }

    private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

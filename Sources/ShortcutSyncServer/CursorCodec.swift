import Crypto
import Foundation
import ShortcutSyncStore
import Synchronization

/// Turns pull cursors into the opaque text devices hand back, and refuses any text it did not make.
///
/// The text is `2.<payload>.<mac>` in base64url: the payload names the epoch, account, device,
/// the device's apps version and the account version; the mac is the first 16 bytes of its HMAC-SHA256 under the database's
/// `cursor_signing` key. A cursor of another account or device is refused by the store, a
/// changed or made-up one here: either way the device gets the whole view (`reset: true`).
struct CursorCodec: Sendable {
    let key: [UInt8]

    func text(_ cursor: PullCursor) -> String {
        let payload = Array("\(cursor.epoch):\(cursor.account.uuidString.lowercased()):\(cursor.device.uuidString.lowercased()):\(cursor.appsVersion):\(cursor.version)".utf8)
        return "2." + Tokens.base64URL(payload) + "." + Tokens.base64URL(mac(payload))
    }

    /// The cursor, or nil for text this service did not make.
    func cursor(_ text: String) -> PullCursor? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard text.utf8.count <= 400, parts.count == 3, parts[0] == "2",
              let payload = Self.bytes(base64URL: parts[1]), let mac = Self.bytes(base64URL: parts[2]),
              Self.constantTimeEqual(mac, self.mac(payload)) else { return nil }
        let fields = String(decoding: payload, as: UTF8.self).split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 5, let epoch = Int64(fields[0]),
              let account = UUID(uuidString: String(fields[1])), let device = UUID(uuidString: String(fields[2])),
              let appsVersion = Int64(fields[3]), let version = Int64(fields[4]), version >= 0 else { return nil }
        return PullCursor(epoch: epoch, account: account, device: device, appsVersion: appsVersion, version: version)
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

/// The codec, made once its key has been read from the database (on the first pull, so that
/// building the application sends nothing to a pool that is not running yet).
final class CursorCodecCache: Sendable {
    private let codec = Mutex<CursorCodec?>(nil)

    func codec(loadingKey load: () async throws -> [UInt8]) async throws -> CursorCodec {
        if let ready = codec.withLock({ $0 }) { return ready }
        let made = CursorCodec(key: try await load())
        codec.withLock { $0 = made }
        return made
    }
}

import Crypto
import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore
import Synchronization

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

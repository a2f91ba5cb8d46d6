import Foundation
import ShortcutSyncDomain

/// The data of the stream's `event: changed`: `{"version": N}`, the account's version when its
/// views may have changed, and, when the service traces, `"traceparent"`: the trace of that change.
struct ChangedMessage: Decodable, Sendable, Hashable {
    var version: Int64
    var traceparent: String?

    /// The poke `data` makes: the version it names, or 0 when it names none that can be read (no
    /// data, not JSON, no `version`, not a 64-bit integer); its trace when it has one of the
    /// header's shape. A poke is a hint: the client pulls all the same, and a pull that waits for
    /// 0 answers at once.
    static func poke(in data: String?) -> Poke {
        guard let data, let message = try? JSONDecoder().decode(Self.self, from: Data(data.utf8)) else { return Poke(version: 0) }
        return Poke(version: message.version, traceparent: message.traceparent.flatMap { TraceParentShape.isWellFormed($0) ? $0 : nil })
    }
}

/// What the stream says when the account's views changed: up to which `version`, and, when the
/// service traces, the change's `traceparent`, which the pull it makes carries (`TraceContext`).
public struct Poke: Sendable, Hashable {
    public var version: Int64
    public var traceparent: String?

    public init(version: Int64, traceparent: String? = nil) {
        self.version = version
        self.traceparent = traceparent
    }
}

import Foundation

/// The data of the stream's `event: changed`: `{"version": N}`, the account's version when its
/// views may have changed.
struct ChangedMessage: Decodable, Sendable, Hashable {
    var version: Int64

    /// The version `data` names, or 0 when it names none that can be read (no data, not JSON, no
    /// `version`, not a 64-bit integer). A poke is a hint: the client pulls all the same, and a
    /// pull that waits for 0 answers at once.
    static func version(in data: String?) -> Int64 {
        guard let data, let message = try? JSONDecoder().decode(Self.self, from: Data(data.utf8)) else { return 0 }
        return message.version
    }
}

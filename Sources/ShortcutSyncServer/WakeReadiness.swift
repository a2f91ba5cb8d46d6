/// What `/readyz` says of the background wakes, as the process's waker sees them now.
public struct WakeReadiness: Sendable, Equatable {
    /// `off`, `ok` or the like: `Readiness.wakes` (openapi.yaml).
    public var word: String
    /// Why APNs refused the provider token, when it did: no wake can be sent until the key is mended.
    public var keyRefusal: String?

    public init(word: String, keyRefusal: String? = nil) {
        self.word = word
        self.keyRefusal = keyRefusal
    }
}

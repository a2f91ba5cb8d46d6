/// The last row a pull delivered from one table: `(version, key)`; with no key, every row of
/// `version` (and below) was delivered.
public struct PullPosition<Key: Sendable & Hashable>: Sendable, Hashable {
    public var version: Int64
    public var key: Key?

    public init(version: Int64, key: Key? = nil) {
        self.version = version
        self.key = key
    }
}

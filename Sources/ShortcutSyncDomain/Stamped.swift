import Foundation

/// A value with the key of the event that set it; the greater key wins.
public struct Stamped<Value: Sendable & Hashable>: Sendable, Hashable {
    public var key: EventKey
    public var value: Value

    public init(key: EventKey, value: Value) {
        self.key = key
        self.value = value
    }

    /// Keeps whichever of `self` and the candidate has the greater key.
    mutating func keepLatest(_ candidate: Stamped<Value>) {
        if candidate.key > key { self = candidate }
    }
}

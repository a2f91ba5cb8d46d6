/// One PostgreSQL node's CPU time (its postmaster and every process under it, from /proc) per
/// push over a push scenario: a Citus cluster's nodes each apart, where the work of a push lands.
public struct NodeCPU: Sendable, Hashable, Codable {
    /// The node's name: "coordinator", "worker1", … or "PostgreSQL".
    public var name: String
    /// In microseconds; nil where its CPU could not be read.
    public var microsecondsPerPush: Double?

    public init(name: String, microsecondsPerPush: Double?) {
        self.name = name
        self.microsecondsPerPush = microsecondsPerPush
    }
}

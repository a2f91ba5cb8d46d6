/// The donation groups one shortcut gained in a batch: how many it holds after the batch, and
/// the groups it did not hold before.
public struct GroupsGained: Sendable, Hashable {
    public var held: Int
    public var new: Set<String>

    public init(held: Int, new: Set<String>) {
        self.held = held
        self.new = new
    }
}

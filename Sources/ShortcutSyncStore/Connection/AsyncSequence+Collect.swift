extension AsyncSequence {
    /// Every element, in order: for the small, bounded results of store queries.
    public func collectAll() async throws -> [Element] {
        var elements: [Element] = []
        for try await element in self { elements.append(element) }
        return elements
    }
}

extension AsyncThrowingStream where Failure == any Error {
    /// `source`'s elements that `transform` keeps (nil: skipped), read by a task of their own
    /// that ends with `source`, with its error, or when this stream's reader goes.
    static func relaying<Source: AsyncSequence & Sendable>(
        _ source: Source, _ transform: @escaping @Sendable (Source.Element) -> Element?
    ) -> Self where Element: Sendable {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await element in source {
                        if let kept = transform(element) { continuation.yield(kept) }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

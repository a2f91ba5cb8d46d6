import Synchronization
import TestRunWidth
import Testing

/// The test process runs a few tests at once, not all of them (`Tests/TestRunWidth`).
@Suite struct TestRunWidthTests {
    private static let running = Mutex(0)

    /// Three times as many cases as the width, each a moment long: were every case started at
    /// once, as Swift Testing does without a width, more than the width would run together.
    @Test(arguments: 0..<(3 * max(1, Int(shortcut_sync_test_run_width()))))
    func noMoreTestsRunAtOnceThanTheWidth(_ case: Int) async throws {
        let width = Int(shortcut_sync_test_run_width())
        #expect(width >= 1, "the width is set before Swift Testing starts")
        let together = Self.running.withLock { $0 += 1; return $0 }
        defer { Self.running.withLock { $0 -= 1 } }
        #expect(together <= width, "\(together) cases of this test ran at once, the width is \(width)")
        try await Task.sleep(for: .milliseconds(100))
    }
}

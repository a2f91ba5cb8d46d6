import Foundation
@testable import ShortcutSyncBench
import Testing

/// `FlushProbe` times real flushes on this machine's disk, in a directory of the test's own.
@Suite struct FlushProbeTests {
    static func directory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flush-probe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func itTimesFlushesInWindowsAndItsThreadEndsWhenStopped() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let probe = try FlushProbe(directory: directory, period: .milliseconds(5))
        try await Task.sleep(for: .milliseconds(300))
        let first = probe.take()
        #expect(first.flushes >= 3, "a flush every 5 ms (plus the flush's own time) for 300 ms")
        #expect(first.longestMilliseconds > 0)
        #expect(first.stalls <= first.flushes)
        #expect(FileManager.default.fileExists(atPath: probe.file.path))
        await probe.stop()
        #expect(probe.failure == nil)
        #expect(!FileManager.default.fileExists(atPath: probe.file.path), "the probe's file is removed")
        _ = probe.take()
        try await Task.sleep(for: .milliseconds(100))
        #expect(probe.take().flushes == 0, "no flush once stopped: the thread has ended")
    }

    @Test func aDirectoryThatCannotBeWrittenIsRefusedAtOnce() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("flush-probe-missing-\(UUID().uuidString)")
        #expect(throws: BenchError.self) { try FlushProbe(directory: missing) }
    }

    @Test func withAProbeTheProbeIsStoppedAlsoWhenTheBodyThrows() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        struct Failed: Error {}
        nonisolated(unsafe) var seen: FlushProbe?
        await #expect(throws: Failed.self) {
            try await FlushProbe.with(directory: directory) { probe -> Int in
                seen = probe
                throw Failed()
            }
        }
        let probe = try #require(seen)
        #expect(!FileManager.default.fileExists(atPath: probe.file.path))
        _ = probe.take()
        try await Task.sleep(for: .milliseconds(100))
        #expect(probe.take().flushes == 0)
        let none = try await FlushProbe.with(directory: nil) { $0 == nil }
        #expect(none)
    }
}

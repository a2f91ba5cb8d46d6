import Foundation
import Logging
import ShortcutSyncDomain
import ShortcutSyncStore
import Synchronization

/// The process's resident memory high-water mark, from /proc (Linux); nil elsewhere.
enum ResidentMemory {
    /// Starts a new high-water mark (writing 5 to clear_refs resets VmHWM to what is resident
    /// now), after giving freed memory back to the system, so that one part's peak does not
    /// include what an earlier part left in the allocator.
    static func resetPeak() {
        #if os(Linux)
        _ = glibcMallocTrim(0)
        #endif
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    static func peak() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else { return nil }
        return kilobytes * 1024
    }
}

#if os(Linux)
/// glibc's `malloc_trim`, which Swift's Glibc module does not export: looked up by name.
private func glibcMallocTrim(_ pad: Int) -> Int32 {
    typealias MallocTrim = @convention(c) (Int) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return 0 }
    return unsafeBitCast(symbol, to: MallocTrim.self)(pad)
}
#endif

import Foundation
import Logging
import ShortcutSyncStore

/// CPU time of processes on this machine, from /proc (Linux).
enum ProcessCPU {
    /// A process's parent, from /proc/<pid>/stat.
    static func parent(of pid: Int32) -> Int32? {
        fields(pid).flatMap { $0.count > 1 ? Int32($0[1]) : nil }
    }

    /// A process's command name (/proc/<pid>/comm).
    static func command(_ pid: Int32) -> String? {
        (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A PostgreSQL server's CPU time so far, in seconds: its postmaster's own and that of its
    /// children that ended (which the postmaster waited for), and every child still running.
    static func ofServer(_ postmaster: Int32) -> Double? {
        guard let own = fields(postmaster), own.count > 14,
              let user = Double(own[11]), let system = Double(own[12]),
              let childrenUser = Double(own[13]), let childrenSystem = Double(own[14]) else { return nil }
        var ticks = user + system + childrenUser + childrenSystem
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in processes {
            guard let pid = Int32(entry), pid != postmaster, let child = fields(pid), child.count > 12,
                  Int32(child[1]) == postmaster, let childUser = Double(child[11]), let childSystem = Double(child[12]) else { continue }
            ticks += childUser + childSystem
        }
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The fields of /proc/<pid>/stat after the command's closing parenthesis: [0] is the state
    /// (field 3), [1] the parent (4), [11] utime (14), [12] stime (15), [13] cutime, [14] cstime.
    static func fields(_ pid: Int32) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ")
    }
}

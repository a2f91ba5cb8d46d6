import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The running server, as its files tell: `postmaster.pid` in the cluster and `owner.pid`, the
/// process that stops it, beside the cluster.
extension EmbeddedPostgres {
    /// The lines of the cluster's `postmaster.pid` (pid, data directory, start time, port,
    /// socket directory, …), or nil when there is none.
    static func postmasterFile(_ cluster: URL) -> [String]? {
        guard let text = try? String(contentsOf: cluster.appendingPathComponent("postmaster.pid"), encoding: .utf8) else { return nil }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// The pid in `ownerFile` if that process still runs (and is not this one).
    static func livingOwner(_ ownerFile: URL) -> pid_t? {
        guard let text = try? String(contentsOf: ownerFile, encoding: .utf8),
              let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0, pid != getpid() else { return nil }
        return isRunning(pid) ? pid : nil
    }

    /// Whether `pid` runs: it exists and, where /proc tells, is not a zombie (a killed process
    /// its parent has not reaped yet is no owner).
    public static func isRunning(_ pid: pid_t) -> Bool {
        if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") {
            let state = stat[stat.index(after: close)...].split(separator: " ").first ?? ""
            return state != "Z" && state != "X"
        }
        return kill(pid, 0) == 0 || errno == EPERM
    }

    /// Records this process as the one that stops the cluster.
    static func claim(_ ownerFile: URL) throws {
        try "\(getpid())\n".write(to: ownerFile, atomically: true, encoding: .utf8)
    }

    /// Stops a cluster at exit, when no task can wait for a child process any more: what
    /// `pg_ctl stop -m fast` does (SIGINT to the postmaster, then wait up to 60 s for it to end),
    /// without starting one.
    static func stopAtExit(cluster: URL, ownerFile: URL, socketDirectory: String?) {
        guard let lines = postmasterFile(cluster), let pid = lines.first.flatMap({ pid_t($0) }), pid > 0 else { return }
        let socketDirectory = socketDirectory ?? (lines.count > 4 ? lines[4] : nil)
        guard kill(pid, SIGINT) == 0 else { return }
        for _ in 0..<1200 where isRunning(pid) { usleep(50_000) }
        try? FileManager.default.removeItem(at: ownerFile)
        // Empty once the server is gone; rmdir leaves anything else alone.
        if let socketDirectory { rmdir(socketDirectory) }
    }

    /// The postmaster serving the cluster, from its `postmaster.pid`, while one runs.
    public var postmaster: pid_t? {
        guard let lines = Self.postmasterFile(clusterDirectory), let pid = lines.first.flatMap({ pid_t($0) }), pid > 0,
              Self.isRunning(pid), Self.isPostgres(pid) else { return nil }
        return pid
    }

    /// Stops a server still running on the cluster after `stop()`: one whose `pg_ctl start` was
    /// cut short (its task cancelled by a signal) came up without this object knowing it
    /// started it, and `stop()` leaves it alone.
    func stopLeftover() {
        guard postmaster != nil else { return }
        let home = clusterHome(asRoot: getuid() == 0)
        logger.notice("stopping a server left running on the cluster", metadata: ["cluster": "\(clusterDirectory.path)"])
        Self.stopAtExit(cluster: clusterDirectory, ownerFile: home.appendingPathComponent("owner.pid"), socketDirectory: nil)
    }
}

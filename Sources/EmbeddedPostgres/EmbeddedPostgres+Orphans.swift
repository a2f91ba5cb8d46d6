import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Clusters whose owner died: a process killed before it could stop the cluster it started (a
/// crashed test run, `kill -9`) leaves a postmaster that nobody will stop. The owner wrote its
/// pid to `owner.pid` beside the cluster; a cluster whose owner no longer runs is an orphan.
extension EmbeddedPostgres {
    /// Stops every orphaned cluster found under `directory` (its own home and its subdirectories,
    /// at most `depth` levels down), except the one at `keeping`, and returns the homes of those
    /// it stopped. A cluster is taken for an orphan only when its `owner.pid` names a process
    /// that has ended and its `postmaster.pid` names a running PostgreSQL server of that very
    /// cluster: nothing else is touched. Each is stopped as `pg_ctl stop -m fast` would.
    ///
    /// With `ownedBefore`, only a cluster whose owner recorded itself before that moment is taken:
    /// a test run sweeps what earlier runs left, never what its own tests are doing.
    @discardableResult
    public static func stopOrphans(
        under directory: URL, depth: Int = 3, keeping: URL? = nil, ownedBefore: Date? = nil, logger: Logger
    ) -> [URL] {
        var stopped: [URL] = []
        for home in clusterHomes(under: directory.standardizedFileURL, depth: depth)
        where home.standardizedFileURL.path != keeping?.standardizedFileURL.path {
            let cluster = home.appendingPathComponent("cluster"), ownerFile = home.appendingPathComponent("owner.pid")
            if let ownedBefore {
                let recorded = (try? FileManager.default.attributesOfItem(atPath: ownerFile.path))?[.modificationDate] as? Date
                guard let recorded, recorded < ownedBefore else { continue }
            }
            guard isOrphan(cluster: cluster, ownerFile: ownerFile) else { continue }
            logger.notice("stopping an embedded PostgreSQL whose owner has ended", metadata: ["cluster": "\(cluster.path)"])
            stopAtExit(cluster: cluster, ownerFile: ownerFile, socketDirectory: nil)
            stopped.append(home)
        }
        return stopped
    }

    /// Whether the cluster's server runs while the process recorded as its owner does not.
    static func isOrphan(cluster: URL, ownerFile: URL) -> Bool {
        guard let text = try? String(contentsOf: ownerFile, encoding: .utf8),
              let owner = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), owner > 0,
              owner != getpid(), !isRunning(owner) else { return false }
        return runningServer(of: cluster) != nil
    }

    /// The postmaster that `postmaster.pid` names, while it runs and serves that very cluster (not
    /// a process that took over a recycled pid).
    static func runningServer(of cluster: URL) -> pid_t? {
        guard let lines = postmasterFile(cluster), lines.count > 1, let postmaster = pid_t(lines[0]), postmaster > 0,
              isRunning(postmaster),
              URL(fileURLWithPath: lines[1]).standardizedFileURL.path == cluster.standardizedFileURL.path,
              isPostgres(postmaster) else { return nil }
        return postmaster
    }

    /// When this process started, from /proc: its start in clock ticks after boot
    /// (`/proc/self/stat`) and the boot's time (`/proc/stat`), to the second.
    ///
    /// Not the modification date of `/proc/self`: that is a link, whose own date is the one /proc
    /// was mounted with, days before any test run, and no owner recorded itself before it (a test
    /// run swept nothing that an earlier one left).
    public static var processStart: Date? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8), let close = stat.lastIndex(of: ")"),
              let system = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        // The fields after the command's ")": the state (the 3rd field) first, the start time the 22nd.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        let boot = system.split(separator: "\n").first { $0.hasPrefix("btime ") }.flatMap { Double($0.dropFirst("btime ".count)) }
        guard fields.count > 19, let ticks = Double(fields[19]), let boot else { return nil }
        return Date(timeIntervalSince1970: boot + ticks / Double(sysconf(Int32(_SC_CLK_TCK))))
    }

    /// Whether `pid`'s program is PostgreSQL's server, where /proc tells.
    static func isPostgres(_ pid: pid_t) -> Bool {
        guard let command = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")) else { return true }
        let program = command.split(separator: 0).first.map { String(decoding: $0, as: UTF8.self) } ?? ""
        return program.hasSuffix("postgres") || program.hasSuffix("postmaster")
    }

    /// The cluster homes (directories holding `owner.pid` and `cluster/`) at `directory` and below.
    private static func clusterHomes(under directory: URL, depth: Int) -> [URL] {
        let files = FileManager.default
        var homes: [URL] = []
        var level = [directory]
        for _ in 0...max(depth, 0) {
            var next: [URL] = []
            for folder in level {
                if files.fileExists(atPath: folder.appendingPathComponent("owner.pid").path),
                   files.fileExists(atPath: folder.appendingPathComponent("cluster").path) {
                    homes.append(folder)
                    continue
                }
                for name in (try? files.contentsOfDirectory(atPath: folder.path)) ?? [] {
                    let child = folder.appendingPathComponent(name)
                    var isDirectory: ObjCBool = false
                    // Links are not followed: the walk stays inside `directory`.
                    if (try? child.resourceValues(forKeys: [.isSymbolicLinkKey]).isSymbolicLink) != true,
                       files.fileExists(atPath: child.path, isDirectory: &isDirectory), isDirectory.boolValue {
                        next.append(child)
                    }
                }
            }
            level = next
        }
        return homes
    }
}

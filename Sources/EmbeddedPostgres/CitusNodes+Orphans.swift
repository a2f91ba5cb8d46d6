import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Citus clusters whose owner died: a process killed inside `with` (a test run's timeout,
/// `kill -9` of `bench citus`) leaves a coordinator and workers that nobody will stop, and their
/// directory. Their owner is the process that ran `with`, whose pid the directory's name holds
/// (`shortcut-sync-citus-<pid>-<random>`), as the embedded cluster's is in its `owner.pid`.
extension CitusNodes {
    /// The start of the name of a cluster's directory, before its owner's pid.
    static let directoryPrefix = "shortcut-sync-citus-"

    /// Stops the nodes of every Citus cluster in `directory` (the temporary directory, where
    /// `with` makes them) whose owner has ended, as `pg_ctl stop -m fast` would, and removes its
    /// directory, with a node's home outside it (/var/tmp, when the directory is out of the
    /// `postgres` user's reach); returns the directories removed. A cluster whose owner runs is
    /// not touched, nor a node whose own `owner.pid` names a running process, nor a server that
    /// is not that node's; a directory under which a server still runs is kept.
    @discardableResult
    public static func stopOrphans(in directory: URL = URL(fileURLWithPath: NSTemporaryDirectory()), logger: Logger) -> [URL] {
        let files = FileManager.default
        var removed: [URL] = []
        for name in (try? files.contentsOfDirectory(atPath: directory.path)) ?? [] where name.hasPrefix(directoryPrefix) {
            guard let owner = name.dropFirst(directoryPrefix.count).split(separator: "-").first.flatMap({ pid_t($0) }), owner > 0,
                  owner != getpid(), !EmbeddedPostgres.isRunning(owner) else { continue }
            let folder = directory.appendingPathComponent(name)
            let homes = ((try? files.contentsOfDirectory(atPath: folder.path)) ?? []).sorted().compactMap { node -> URL? in
                var isDirectory: ObjCBool = false
                let path = folder.appendingPathComponent(node)
                guard (try? path.resourceValues(forKeys: [.isSymbolicLinkKey]).isSymbolicLink) != true,
                      files.fileExists(atPath: path.path, isDirectory: &isDirectory), isDirectory.boolValue else { return nil }
                return EmbeddedPostgres(dataDirectory: path, logger: logger).clusterHome(asRoot: getuid() == 0)
            }
            var serving = false
            for home in homes {
                let cluster = home.appendingPathComponent("cluster"), ownerFile = home.appendingPathComponent("owner.pid")
                guard EmbeddedPostgres.runningServer(of: cluster) != nil else { continue }
                guard EmbeddedPostgres.livingOwner(ownerFile) == nil else {
                    serving = true
                    continue
                }
                logger.notice("stopping a Citus node whose owner has ended", metadata: ["cluster": "\(cluster.path)"])
                EmbeddedPostgres.stopAtExit(cluster: cluster, ownerFile: ownerFile, socketDirectory: nil)
                serving = serving || EmbeddedPostgres.runningServer(of: cluster) != nil
            }
            guard !serving else {
                logger.warning("keeping a Citus cluster's directory: a node still runs", metadata: ["directory": "\(folder.path)"])
                continue
            }
            for home in homes where !home.path.hasPrefix(folder.path + "/") {
                try? files.removeItem(at: home)
            }
            if (try? files.removeItem(at: folder)) != nil { removed.append(folder) }
        }
        return removed
    }
}

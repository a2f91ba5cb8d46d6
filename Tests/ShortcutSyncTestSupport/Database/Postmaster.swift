import EmbeddedPostgres
import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The postmaster of the embedded cluster under a data directory, for tests that must leave
/// nothing running: a test's own `serve`, or a cluster a killed test run left behind.
public enum Postmaster {
    /// Its pid, if it runs (read from the cluster's `postmaster.pid`).
    public static func running(dataDirectory: URL) -> pid_t? {
        guard let lines = pidFile(dataDirectory: dataDirectory), let pid = lines.first.flatMap({ pid_t($0) }),
              EmbeddedPostgres.isRunning(pid) else { return nil }
        return pid
    }

    /// The directory of its Unix socket, if it runs (line 5 of `postmaster.pid`).
    public static func socketDirectory(dataDirectory: URL) -> String? {
        guard running(dataDirectory: dataDirectory) != nil, let lines = pidFile(dataDirectory: dataDirectory), lines.count > 4 else { return nil }
        return lines[4]
    }

    private static func pidFile(dataDirectory: URL) -> [String]? {
        let cluster = EmbeddedPostgres(dataDirectory: dataDirectory, logger: Logger(label: "tests")).clusterDirectory
        guard let text = try? String(contentsOf: cluster.appendingPathComponent("postmaster.pid"), encoding: .utf8) else { return nil }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// Stops it at once if it runs (SIGQUIT, PostgreSQL's immediate shutdown: nothing in a test
    /// cluster is worth keeping), waiting up to 5 s for it to end, and removes its (then empty)
    /// socket directory.
    public static func quit(dataDirectory: URL) {
        guard let pid = running(dataDirectory: dataDirectory) else { return }
        let socketDirectory = socketDirectory(dataDirectory: dataDirectory)
        kill(pid, SIGQUIT)
        for _ in 0..<100 where EmbeddedPostgres.isRunning(pid) { usleep(50_000) }
        if let socketDirectory { rmdir(socketDirectory) }
    }
}

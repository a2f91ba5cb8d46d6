import EmbeddedPostgres
import Foundation
import ShortcutSyncChildProcess
#if canImport(Glibc)
import Glibc
#endif

extension ServeProcess {
    /// Starts the real `shortcut-sync serve` with the embedded PostgreSQL under `dataDirectory`,
    /// on `port` (a free one when nil: give an earlier one's to start the service again where
    /// its clients expect it), its output kept. With `givesAdminToken` false it gets none, and
    /// makes its own.
    ///
    /// `forceStop()` kills whatever is left — the child and the cluster's postmaster — so a
    /// failing test leaves nothing running; call it in a `defer`.
    public convenience init(dataDirectory: URL, port: Int? = nil, arguments: [String] = [], givesAdminToken: Bool = true) async throws {
        try await self.init(executable: try CommandProcess.shortcutSync(), database: .embedded(dataDirectory: dataDirectory),
                            port: try port ?? EmbeddedPostgres.freeLoopbackPort(), operatorPort: try EmbeddedPostgres.freeLoopbackPort(), adminToken: givesAdminToken ? "admin-\(UUID())" : nil,
                            logLevel: "info", arguments: arguments, output: .kept)
    }

    /// Starts the real `shortcut-sync serve` on the database at `databaseURL` (`DATABASE_URL`),
    /// on a free port, with an admin token of its own, its output kept. `forceStop()` is for the
    /// embedded PostgreSQL only: stop this one with `command.forceStop()`.
    public convenience init(databaseURL: String, arguments: [String] = [], environment: [String: String?] = [:]) async throws {
        try await self.init(executable: try CommandProcess.shortcutSync(), database: .url(databaseURL),
                            port: try EmbeddedPostgres.freeLoopbackPort(), operatorPort: try EmbeddedPostgres.freeLoopbackPort(), adminToken: "admin-\(UUID())",
                            logLevel: "info", arguments: arguments, environment: environment, output: .kept)
    }

    /// Where `serve` keeps the admin token it makes when given none.
    public var adminTokenFile: URL { Self.adminTokenFile(dataDirectory: embeddedDataDirectory) }

    /// The pid of the postmaster of this data directory's cluster, if one runs.
    public var postmaster: pid_t? { Postmaster.running(dataDirectory: embeddedDataDirectory) }

    /// Kills the child and the cluster's postmaster if they still run, and removes the data directory.
    public func forceStop() {
        // The child, then its cluster: `Postmaster.quit` waits for the postmaster to end, so that
        // nothing writes into the data directory as it is removed.
        command.forceStop()
        Postmaster.quit(dataDirectory: embeddedDataDirectory)
        try? FileManager.default.removeItem(at: embeddedDataDirectory)
    }

    /// The tests' `serve` always runs the embedded PostgreSQL (`init(dataDirectory:)`).
    private var embeddedDataDirectory: URL { dataDirectory! }
}

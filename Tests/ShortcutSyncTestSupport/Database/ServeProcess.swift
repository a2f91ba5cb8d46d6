import Foundation
import Logging
import ShortcutSyncStore
#if canImport(Glibc)
import Glibc
#endif

/// The real `shortcut-sync serve`, started as a child process on a data directory of its own
/// (with its embedded PostgreSQL), for tests of what happens to the process and its cluster.
///
/// `forceStop()` kills whatever is left — the child and the cluster's postmaster — so a failing
/// test leaves nothing running; call it in a `defer`.
public final class ServeProcess: @unchecked Sendable {
    public let port: Int
    public let dataDirectory: URL
    /// The admin token it was given (in its environment), or when it was given none, the one it
    /// made and keeps in `adminTokenFile` ("" until it wrote it).
    public var adminToken: String {
        givenAdminToken ?? SecretFile(adminTokenFile).read() ?? ""
    }
    private let givenAdminToken: String?
    /// Where `serve` keeps the admin token it makes when given none.
    public var adminTokenFile: URL { dataDirectory.appendingPathComponent("admin-token") }
    public var baseURL: String { "http://127.0.0.1:\(port)" }
    private let command: CommandProcess

    /// Starts `shortcut-sync serve` with the embedded PostgreSQL under `dataDirectory`, on
    /// `port` (a free one when nil: give an earlier one's to start the service again where
    /// its clients expect it). With `givesAdminToken` false it gets none, and makes its own.
    public init(dataDirectory: URL, port: Int? = nil, arguments: [String] = [], givesAdminToken: Bool = true) throws {
        self.dataDirectory = dataDirectory
        self.port = try port ?? EmbeddedPostgres.freeLoopbackPort()
        givenAdminToken = givesAdminToken ? "admin-\(UUID())" : nil
        command = try CommandProcess(
            ["serve", "--port", "\(self.port)", "--data-dir", dataDirectory.path, "--log-level", "info"] + arguments,
            environment: ["SHORTCUT_SYNC_ADMIN_TOKEN": givenAdminToken])
    }

    /// The `shortcut-sync` executable built beside the test bundle.
    static func executable() throws -> URL {
        let buildDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [buildDirectory, buildDirectory.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("shortcut-sync")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw ServeProcessError("the shortcut-sync executable is not beside the tests in \(buildDirectory.path); build it with `swift build`")
    }

    public var processIdentifier: pid_t { command.processIdentifier }
    public var isRunning: Bool { command.isRunning }
    /// The exit status, once the process has ended and been reaped.
    public var exitStatus: Int32? { command.exitStatus }
    /// What it printed: its banner (standard output), then its log (standard error).
    public var output: String { command.output + command.errorOutput }

    /// The pid of the postmaster of this data directory's cluster, if one runs.
    public var postmaster: pid_t? { Postmaster.running(dataDirectory: dataDirectory) }

    /// Waits up to `timeout` for `pid` to end; whether it did.
    public static func waitUntilEnded(_ pid: pid_t, timeout: Duration = .seconds(5)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while EmbeddedPostgres.isRunning(pid) {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    public func send(_ signal: Int32) {
        command.send(signal)
    }

    /// Waits for the process to end; returns how long it took, or nil if it still runs after `timeout`.
    public func waitForExit(timeout: Duration) async throws -> Duration? {
        let started = ContinuousClock.now
        guard try await command.waitForExit(timeout: timeout) else { return nil }
        return ContinuousClock.now - started
    }

    /// Kills the child and the cluster's postmaster if they still run, and removes the data directory.
    public func forceStop() {
        // The postmaster first: one that held a descriptor of the child would keep Foundation
        // from ever seeing the child end, and `command.forceStop()` waits for that.
        Postmaster.quit(dataDirectory: dataDirectory)
        command.forceStop()
        try? FileManager.default.removeItem(at: dataDirectory)
    }
}

public struct ServeProcessError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

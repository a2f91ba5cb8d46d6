import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `shortcut-sync serve` as a child process on a port of its own: for the tests of what happens
/// to the process and its embedded PostgreSQL, and for the push benchmark, whose service's
/// memory and CPU must be its own.
public final class ServeProcess: Sendable {
    /// Where the service finds its database.
    public enum Database: Sendable {
        /// A server's URL, given in the environment (`DATABASE_URL`): it may hold a password.
        case url(String)
        /// The embedded PostgreSQL under a data directory (`--data-dir`), `DATABASE_URL` removed.
        case embedded(dataDirectory: URL)
    }

    public let port: Int
    /// The operators' listener's port (`--operator-port`): `/metrics`, `/readyz`.
    public let operatorPort: Int
    /// The embedded PostgreSQL's data directory, when it runs one.
    public let dataDirectory: URL?
    /// The child itself.
    public let command: CommandProcess
    private let givenAdminToken: String?

    /// Starts `serve` of `executable` on `port` and `database`, with `arguments` after its own.
    /// `adminToken` is given in the environment (`SHORTCUT_SYNC_ADMIN_TOKEN`); without one, a
    /// `serve` on the embedded PostgreSQL makes its own and keeps it in its data directory.
    /// `environment`: more variables (nil removes one), such as OpenTelemetry's.
    public init(executable: URL, database: Database, port: Int, operatorPort: Int, adminToken: String?, logLevel: String,
                arguments: [String] = [], environment more: [String: String?] = [:], output: CommandProcess.Output) async throws {
        self.port = port
        self.operatorPort = operatorPort
        givenAdminToken = adminToken
        var options = ["serve", "--port", "\(port)", "--operator-port", "\(operatorPort)"]
        var environment: [String: String?] = ["SHORTCUT_SYNC_ADMIN_TOKEN": adminToken]
        switch database {
        case .url(let url):
            dataDirectory = nil
            environment["DATABASE_URL"] = url
        case .embedded(let directory):
            dataDirectory = directory
            options += ["--data-dir", directory.path]
            environment.updateValue(nil, forKey: "DATABASE_URL")
        }
        environment.merge(more) { _, given in given }
        command = try await CommandProcess(executable: executable, arguments: options + ["--log-level", logLevel] + arguments,
                                           environment: environment, output: output)
    }

    /// Where a `serve` on the embedded PostgreSQL under `dataDirectory` keeps the admin token it makes.
    public static func adminTokenFile(dataDirectory: URL) -> URL {
        dataDirectory.appendingPathComponent("admin-token")
    }

    /// The admin token it was given, or when it was given none, the one it made and keeps in
    /// its data directory ("" until it wrote it).
    public var adminToken: String {
        if let givenAdminToken { return givenAdminToken }
        guard let dataDirectory,
              let text = try? String(contentsOf: Self.adminTokenFile(dataDirectory: dataDirectory), encoding: .utf8) else { return "" }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }
    public var url: URL { URL(string: baseURL)! }
    /// The operators' listener: `/metrics`, `/readyz`.
    public var operatorURL: String { "http://127.0.0.1:\(operatorPort)" }

    public var processIdentifier: pid_t { command.processIdentifier }
    public var isRunning: Bool { command.isRunning }
    /// The exit status, once the process has ended and been reaped.
    public var exitStatus: Int32? { command.exitStatus }
    /// What it printed, when its output is kept: its banner (standard output), then its log (standard error).
    public var output: String { command.output + command.errorOutput }

    public func send(_ signal: Int32) {
        command.send(signal)
    }

    /// Waits for the process to end; returns how long it took, or nil if it still runs after `timeout`.
    public func waitForExit(timeout: Duration) async throws -> Duration? {
        let started = ContinuousClock.now
        guard try await command.waitForExit(timeout: timeout) else { return nil }
        return ContinuousClock.now - started
    }

    /// Asks it to shut down (SIGTERM) and waits until it has.
    public func stop() async {
        await command.stop()
    }
}

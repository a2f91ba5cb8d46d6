import Foundation
import Subprocess
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// The machine's `initdb` and `pg_ctl`, run to completion as child processes: as the `postgres`
/// user (through `runuser`) when this process is root, since PostgreSQL refuses to run as root.
///
/// swift-subprocess waits for each child without holding a thread of the async runtime, and
/// starts it with no descriptor of this process but its standard streams (it closes every other
/// one in the child: `posix_spawn_file_actions_addclosefrom_np` on glibc, `close_range` where it
/// forks). `pg_ctl start` leaves a postmaster running, as another user when this process is root:
/// it holds none of this process's sockets and files, nor the socket a parent process watches to
/// learn that this one ended.
struct PostgresTools: Sendable {
    /// The directory that holds `initdb`, `pg_ctl` and the installation's other tools.
    let bin: String
    /// Whether they run as the `postgres` user.
    let asPostgres: Bool

    /// The newest PostgreSQL `bin` directory: PATH first, then /usr/lib/postgresql/*/bin.
    static func find(asPostgres: Bool) throws -> PostgresTools {
        let fm = FileManager.default
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":").map(String.init)
        where fm.isExecutableFile(atPath: directory + "/initdb") && fm.isExecutableFile(atPath: directory + "/pg_ctl") {
            // The installation's own directory, where links to initdb and pg_ctl lead
            // (/usr/local/bin may link those two alone): its other tools (pg_basebackup) are there.
            let installation = URL(fileURLWithPath: directory + "/initdb").resolvingSymlinksInPath().deletingLastPathComponent().path
            return PostgresTools(bin: installation, asPostgres: asPostgres)
        }
        let root = "/usr/lib/postgresql"
        let versions = ((try? fm.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted(by: >)
        for version in versions where fm.isExecutableFile(atPath: "\(root)/\(version)/bin/initdb") {
            return PostgresTools(bin: "\(root)/\(version)/bin", asPostgres: asPostgres)
        }
        throw EmbeddedPostgres.Failure.binariesNotFound
    }

    /// Runs `tool` (`initdb`, `pg_ctl`) with `arguments` to its end and returns what it printed;
    /// throws `commandFailed` unless it exits with 0.
    ///
    /// A tool runs to its end even when the calling task is cancelled (in a task of its own,
    /// which the caller waits for): a `pg_ctl` killed half-way would leave a cluster half-made,
    /// or a server that nobody stops.
    ///
    /// Output goes to a file rather than a pipe: `pg_ctl start` leaves a server running, and
    /// nothing may wait for a pipe that the server could keep open.
    @discardableResult
    func run(_ tool: String, _ arguments: [String]) async throws -> String {
        let command = asPostgres
            ? ["/usr/sbin/runuser", "-u", "postgres", "--", bin + "/" + tool] + arguments
            : [bin + "/" + tool] + arguments
        let outcome = await Task { await Self.runToEnd(command) }.value
        return try outcome.get()
    }

    private static func runToEnd(_ command: [String]) async -> Result<String, any Error> {
        let described = command.joined(separator: " ")
        let outputPath = NSTemporaryDirectory() + "shortcut-sync-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).out"
        let fd = open(outputPath, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let failure = errno
            return .failure(EmbeddedPostgres.Failure.commandFailed(described, status: failure, output: "cannot create \(outputPath): \(String(cString: strerror(failure)))"))
        }
        // Unlinked at once, read back through the descriptor: a process killed while the tool
        // runs (SIGKILL runs no cleanup) leaves no file behind, as it did each time before.
        unlink(outputPath)
        defer { close(fd) }
        let status: TerminationStatus
        do {
            status = try await Subprocess.run(
                .path(FilePath(command[0])), arguments: Arguments(Array(command.dropFirst())),
                input: .none,
                output: .fileDescriptor(FileDescriptor(rawValue: fd), closeAfterSpawningProcess: false),
                error: .combinedWithOutput
            ).terminationStatus
        } catch {
            return .failure(EmbeddedPostgres.Failure.commandFailed(described, status: -1, output: "\(error)"))
        }
        let output = Self.readWhole(fd)
        switch status {
        case .exited(0):
            return .success(output)
        case .exited(let code):
            return .failure(EmbeddedPostgres.Failure.commandFailed(described, status: code, output: output))
        case .signaled(let signal):
            return .failure(EmbeddedPostgres.Failure.commandFailed(described, status: 128 + signal, output: output))
        }
    }

    /// What the file open as `fd` holds, from its start (what a tool printed: a few lines).
    private static func readWhole(_ fd: Int32) -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4_096)
        var offset: off_t = 0
        while true {
            let count = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
            offset += off_t(count)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension EmbeddedPostgres {
    /// The shared library of a server extension (`citus` → `…/lib/citus.so`) for the PostgreSQL
    /// whose tools an embedded cluster runs, if it is installed: beside their `bin` directory, as
    /// Debian's packages and `make install` against their `pg_config` put it (links to the tools
    /// followed). Nil otherwise.
    public static func extensionLibrary(_ name: String) -> URL? {
        guard let tools = try? PostgresTools.find(asPostgres: false) else { return nil }
        // The installation's own bin directory, not a directory of links to it (/usr/local/bin).
        let bin = URL(fileURLWithPath: tools.bin + "/initdb").resolvingSymlinksInPath().deletingLastPathComponent()
        let library = bin.deletingLastPathComponent().appendingPathComponent("lib/\(name).so")
        return FileManager.default.fileExists(atPath: library.path) ? library : nil
    }
}

extension EmbeddedPostgres {
    /// The settings that load `pg_stat_statements` (its statements' time and buffers, which the
    /// benchmarks report), when the extension is installed; none otherwise.
    public static var statementStatistics: [(name: String, value: String)] {
        extensionLibrary("pg_stat_statements") == nil ? [] : [("shared_preload_libraries", "pg_stat_statements")]
    }
}

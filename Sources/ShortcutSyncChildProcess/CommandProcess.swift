import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An executable — `shortcut-sync` itself — run as a child process: for the tests of the command
/// line and of `serve`, and for the benchmarks, whose service must not share the load's process.
///
/// Secrets reach it through its environment, never its arguments, which every user of the
/// machine may list. `forceStop()` in a `defer` leaves nothing running when its user fails.
public final class CommandProcess: @unchecked Sendable {
    /// Where the child's standard output and error go.
    public enum Output: Sendable {
        /// Where this process's go: a benchmark's service, whose errors its runner should see.
        case inherited
        /// Into files of their own, apart, read back by `output` and `errorOutput` (tests).
        case kept
    }

    private let process = Process()
    private let outputPath: String?
    private let errorPath: String?

    /// Starts `executable` with `arguments`; `environment` sets (or, with nil, removes) variables
    /// of this process's own environment, which the child gets; `standardInput` is written to
    /// its standard input and closed (without one, it reads nothing).
    public init(executable: URL, arguments: [String], environment changes: [String: String?] = [:],
                standardInput: String? = nil, output: Output) throws {
        process.executableURL = executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        for (name, value) in changes { environment[name] = value }
        process.environment = environment
        switch output {
        case .inherited:
            (outputPath, errorPath) = (nil, nil)
        case .kept:
            let base = NSTemporaryDirectory() + "shortcut-sync-command-\(UUID().uuidString)"
            (outputPath, errorPath) = (base + ".out", base + ".err")
            for path in [base + ".out", base + ".err"] { _ = FileManager.default.createFile(atPath: path, contents: nil) }
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: base + ".out"))
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: base + ".err"))
        }
        if let standardInput {
            let pipe = Pipe()
            process.standardInput = pipe
            try process.run()
            pipe.fileHandleForWriting.write(Data(standardInput.utf8))
            try pipe.fileHandleForWriting.close()
        } else {
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }
    }

    /// What it printed on standard output so far ("" when its output is not kept).
    public var output: String { outputPath.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? "" }
    /// What it printed on standard error so far ("" when its output is not kept).
    public var errorOutput: String { errorPath.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? "" }
    /// The exit status, once the process has ended and been reaped.
    public var exitStatus: Int32? { process.isRunning ? nil : process.terminationStatus }
    public var isRunning: Bool { process.isRunning }
    public var processIdentifier: pid_t { process.processIdentifier }

    public func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits up to `timeout` for the process to end; whether it did.
    public func waitForExit(timeout: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        guard try await Self.waitUntilEnded(process.processIdentifier, timeout: timeout) else { return false }
        // Foundation reaps the child and records its status a moment later (on a loaded machine,
        // seconds later): within what is left of the same timeout.
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        return !process.isRunning
    }

    /// Asks it to end (SIGTERM) and waits until it has, as a service's operator would.
    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    /// Kills it if it still runs, and removes the files that kept its output.
    public func forceStop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        for path in [outputPath, errorPath].compactMap(\.self) { try? FileManager.default.removeItem(atPath: path) }
    }

    /// Whoever forgot `forceStop()`, nothing is left behind: no child, no output file.
    deinit {
        forceStop()
    }

    /// Waits up to `timeout` for `pid` — a child or not, such as a postmaster — to end; whether it did.
    public static func waitUntilEnded(_ pid: pid_t, timeout: Duration = .seconds(5)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while isRunning(pid) {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    /// Whether `pid` runs: a child that ended but was not reaped yet (a zombie) does not.
    public static func isRunning(_ pid: pid_t) -> Bool {
        if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") {
            let state = stat[stat.index(after: close)...].split(separator: " ").first ?? ""
            return state != "Z" && state != "X"
        }
        return kill(pid, 0) == 0 || errno == EPERM
    }
}

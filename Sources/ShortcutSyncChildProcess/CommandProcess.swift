import Foundation
import Subprocess
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// An executable — `shortcut-sync` itself — run as a child process: for the tests of the command
/// line and of `serve`, and for the benchmarks, whose service must not share the load's process.
///
/// Secrets reach it through its environment, never its arguments, which every user of the
/// machine may list. A task of its own runs it through swift-subprocess, which waits for its end
/// without holding a thread of the async runtime and reaps it; this object only hands out its
/// pid and, once it ended, its exit status. `forceStop()` in a `defer` — or, when its user forgot
/// that, `deinit` — kills it at once, so a failing user leaves nothing running.
public final class CommandProcess: Sendable {
    /// Where the child's standard output and error go.
    public enum Output: Sendable {
        /// Where this process's go: a benchmark's service, whose errors its runner should see.
        case inherited
        /// Into files of their own, apart, read back by `output` and `errorOutput` (tests).
        case kept
    }

    /// The child's pid: its own until swift-subprocess reaps it, the moment before `exitStatus` is set.
    public let processIdentifier: pid_t
    private let outputPath: String?
    private let errorPath: String?
    private let termination: Termination
    /// The task that runs the child to its end: `stop()` waits for it.
    private let runner: Task<Void, Never>

    /// Starts `executable` with `arguments`; `environment` sets (or, with nil, removes) variables
    /// of this process's own environment, which the child gets; `standardInput` is written to
    /// its standard input and closed (without one, it reads nothing). Returns once it runs.
    public init(executable: URL, arguments: [String], environment changes: [String: String?] = [:],
                standardInput: String? = nil, output: Output) async throws {
        var environment: [Environment.Key: String?] = [:]
        for (name, value) in changes {
            if let key = Environment.Key(rawValue: name) { environment.updateValue(value, forKey: key) }
        }
        // A process group of its own, as Foundation's Process gave it: a terminal's Ctrl-C reaches
        // this process alone, which stops its children itself, in its own order.
        var options = PlatformOptions()
        options.processGroupID = 0
        let configuration = Configuration(executable: .path(FilePath(executable.path)), arguments: Arguments(arguments),
                                          environment: .inherit.updating(environment), platformOptions: options)
        let paths: (output: String, error: String)?
        let files: (output: FileDescriptor, error: FileDescriptor)
        switch output {
        case .inherited:
            paths = nil
            files = (.standardOutput, .standardError)
        case .kept:
            let base = NSTemporaryDirectory() + "shortcut-sync-command-\(UUID().uuidString)"
            paths = (base + ".out", base + ".err")
            files = try Self.createFiles(base + ".out", base + ".err")
        }
        let termination = Termination()
        do {
            if let standardInput {
                (processIdentifier, runner) = try await Self.start(configuration, input: .string(standardInput), files: files,
                                                                   termination: termination)
            } else {
                (processIdentifier, runner) = try await Self.start(configuration, input: .none, files: files, termination: termination)
            }
        } catch {
            Self.remove(paths?.output, paths?.error)
            throw error
        }
        (outputPath, errorPath) = (paths?.output, paths?.error)
        self.termination = termination
    }

    /// What it printed on standard output so far ("" when its output is not kept).
    public var output: String { outputPath.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? "" }
    /// What it printed on standard error so far ("" when its output is not kept).
    public var errorOutput: String { errorPath.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? "" }
    /// The exit status once the process has ended and been reaped: 128 plus the signal's number
    /// when a signal ended it, as a shell gives it.
    public var exitStatus: Int32? { termination.exitStatus }
    /// Whether it has not ended yet (or has, but was not reaped yet).
    public var isRunning: Bool { exitStatus == nil }

    /// Sends `signal` unless it has ended.
    public func send(_ signal: Int32) {
        termination.whileRunning { kill(processIdentifier, signal) }
    }

    /// Waits up to `timeout` for the process to end and be reaped; whether it did.
    public func waitForExit(timeout: Duration) async throws -> Bool {
        try await Self.poll(timeout: timeout) { exitStatus != nil }
    }

    /// Asks it to end (SIGTERM) and waits until it has, as a service's operator would.
    public func stop() async {
        send(SIGTERM)
        await runner.value
    }

    /// Kills it (SIGKILL) if it still runs and removes the files that kept its output, without
    /// waiting: for a `defer`, which cannot. The task that runs it reaps it a moment later; a
    /// user that needs it gone first waits with `waitForExit(timeout:)`.
    public func forceStop() {
        send(SIGKILL)
        Self.remove(outputPath, errorPath)
    }

    /// Whoever forgot `forceStop()`, nothing is left behind: no child, no output file.
    deinit {
        forceStop()
    }

    /// Waits up to `timeout` for `pid` — a child or not, such as a postmaster — to end; whether it did.
    public static func waitUntilEnded(_ pid: pid_t, timeout: Duration = .seconds(5)) async throws -> Bool {
        try await poll(timeout: timeout) { !isRunning(pid) }
    }

    /// Whether `pid` runs: a child that ended but was not reaped yet (a zombie) does not.
    public static func isRunning(_ pid: pid_t) -> Bool {
        if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") {
            let state = stat[stat.index(after: close)...].split(separator: " ").first ?? ""
            return state != "Z" && state != "X"
        }
        return kill(pid, 0) == 0 || errno == EPERM
    }

    /// Checks `ended` every 20 ms until it holds or `timeout` passes; whether it held. A sleep, not
    /// a blocked thread: the pids of other processes than children can only be watched this way.
    private static func poll(timeout: Duration, until ended: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !ended() {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    /// Starts the child in a task that runs it to its end and records its exit status in
    /// `termination`; returns its pid once it runs, with that task. The task holds `termination`,
    /// never the `CommandProcess`, so that one its user forgot still reaches `deinit`.
    ///
    /// `files` (standard output's and error's) are the task's to close once the child ended: it
    /// has its own copies, and this process needs them no longer.
    private static func start<Input: InputProtocol>(
        _ configuration: Configuration, input: Input, files: (output: FileDescriptor, error: FileDescriptor), termination: Termination
    ) async throws -> (pid_t, Task<Void, Never>) {
        var runner: Task<Void, Never>?
        let pid: pid_t = try await withCheckedThrowingContinuation { started in
            runner = Task {
                var launched = false
                do {
                    let result = try await Subprocess.run(
                        configuration, input: input,
                        output: .fileDescriptor(files.output, closeAfterSpawningProcess: false),
                        error: .fileDescriptor(files.error, closeAfterSpawningProcess: false)
                    ) { execution in
                        launched = true
                        started.resume(returning: execution.processIdentifier.value)
                    }
                    switch result.terminationStatus {
                    case .exited(let code): termination.record(code)
                    case .signaled(let signal): termination.record(128 + signal)
                    }
                } catch {
                    // Launched but lost (its input could not be written, or watching it failed):
                    // swift-subprocess tore it down. Its status is unknown.
                    if launched { termination.record(-1) } else { started.resume(throwing: error) }
                }
                for file in [files.output, files.error] where file != .standardOutput && file != .standardError {
                    try? file.close()
                }
            }
        }
        return (pid, runner!)
    }

    /// Creates the files that keep the child's standard output and error, for this user only.
    private static func createFiles(_ outputPath: String, _ errorPath: String) throws -> (output: FileDescriptor, error: FileDescriptor) {
        func create(_ path: String) throws -> FileDescriptor {
            try FileDescriptor.open(FilePath(path), .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec],
                                    permissions: [.ownerReadWrite])
        }
        let output = try create(outputPath)
        do {
            return (output, try create(errorPath))
        } catch {
            try? output.close()
            remove(outputPath)
            throw error
        }
    }

    private static func remove(_ paths: String?...) {
        for path in paths.compactMap(\.self) { unlink(path) }
    }
}

/// A child's exit status, shared by its `CommandProcess` and the task that runs it.
private final class Termination: Sendable {
    private let status = Mutex<Int32?>(nil)

    var exitStatus: Int32? { status.withLock { $0 } }

    func record(_ exitStatus: Int32) {
        status.withLock { $0 = exitStatus }
    }

    /// Runs `body` — a signal to the child's pid — only while no status is recorded, and holds
    /// the record back until it returned: a pid this process reaped, which the system may give
    /// another process, is not signalled. What is left is the moment between swift-subprocess
    /// reaping the child and the record, too short for the system to hand its pid out again.
    func whileRunning(_ body: () -> Void) {
        status.withLock { if $0 == nil { body() } }
    }
}

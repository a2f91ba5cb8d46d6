import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The real `shortcut-sync` executable run with some arguments as a child process, its
/// standard output and error kept apart: for tests of the command line (exit statuses, what
/// it prints). `forceStop()` in a `defer` leaves nothing running when a test fails.
public final class CommandProcess: @unchecked Sendable {
    private let process = Process()
    private let outputPath: String
    private let errorPath: String

    /// Starts it with `arguments`; `environment` sets (or, with nil, removes) variables of the
    /// tests' own environment, from which `DATABASE_URL` is always removed.
    public init(_ arguments: [String], environment extra: [String: String?] = [:], standardInput: String? = nil) throws {
        let base = NSTemporaryDirectory() + "shortcut-sync-command-\(UUID().uuidString)"
        outputPath = base + ".out"
        errorPath = base + ".err"
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        process.executableURL = try ServeProcess.executable()
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["DATABASE_URL"] = nil
        for (name, value) in extra { environment[name] = value }
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
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

    /// Runs the command to its end (killing it after `timeout`) and returns it.
    public static func run(_ arguments: [String], environment: [String: String?] = [:], standardInput: String? = nil,
                           timeout: Duration = .seconds(60)) async throws -> CommandProcess {
        let command = try CommandProcess(arguments, environment: environment, standardInput: standardInput)
        guard try await command.waitForExit(timeout: timeout) else {
            command.forceStop()
            throw ServeProcessError("shortcut-sync \(arguments.joined(separator: " ")) did not end within \(timeout)")
        }
        return command
    }

    public var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }
    public var errorOutput: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }
    /// The exit status, once the process has ended and been reaped.
    public var exitStatus: Int32? { process.isRunning ? nil : process.terminationStatus }
    public var isRunning: Bool { process.isRunning }
    public var processIdentifier: pid_t { process.processIdentifier }

    public func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits up to `timeout` for the process to end; whether it did.
    public func waitForExit(timeout: Duration) async throws -> Bool {
        guard try await ServeProcess.waitUntilEnded(process.processIdentifier, timeout: timeout) else { return false }
        // Foundation reaps the child and records its status a moment later.
        for _ in 0..<100 where process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        return true
    }

    public func forceStop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: outputPath)
        try? FileManager.default.removeItem(atPath: errorPath)
    }
}

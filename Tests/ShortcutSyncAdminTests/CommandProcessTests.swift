import Foundation
import ShortcutSyncChildProcess
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What the tests of the command line and the benchmarks rely on in a child process, shown with
/// the system's shell rather than `shortcut-sync`, so that a failure here is the child's handling
/// and not the executable's.
@Suite struct CommandProcessTests {
    static let shell = URL(fileURLWithPath: "/bin/sh")

    @Test func itsInputIsWrittenAndClosedAndItsOutputsAreKeptApart() async throws {
        let command = try await CommandProcess(executable: Self.shell, arguments: ["-c", "cat; echo leek >&2; exit 3"],
                                               standardInput: "soup\n", output: .kept)
        defer { command.forceStop() }
        #expect(try await command.waitForExit(timeout: .seconds(10)), "cat ends once its input is closed")
        #expect(command.output == "soup\n")
        #expect(command.errorOutput == "leek\n")
        #expect(command.exitStatus == 3)
    }

    @Test func itsEnvironmentIsThisProcesssWithVariablesSetAndRemoved() async throws {
        let command = try await CommandProcess(executable: Self.shell, arguments: ["-c", #"echo "$PATH $SOUP ${HOME:-none}""#],
                                               environment: ["SOUP": "leek", "HOME": nil], output: .kept)
        defer { command.forceStop() }
        #expect(try await command.waitForExit(timeout: .seconds(10)))
        #expect(command.output == "\(ProcessInfo.processInfo.environment["PATH"] ?? "") leek none\n")
    }

    @Test func stopAsksItToEndAndWaitsUntilItHas() async throws {
        let command = try await CommandProcess(executable: Self.shell, arguments: ["-c", "exec sleep 60"], output: .kept)
        defer { command.forceStop() }
        #expect(command.isRunning)
        #expect(getpgid(command.processIdentifier) == command.processIdentifier, "a process group of its own: a terminal's Ctrl-C is not its")
        await command.stop()
        #expect(command.exitStatus == 128 + SIGTERM, "a signalled child's status is the shell's")
    }

    /// A user that forgets `forceStop()` leaves nothing running: the last reference going kills the child.
    @Test func aForgottenChildIsKilled() async throws {
        var command: CommandProcess? = try await CommandProcess(executable: Self.shell, arguments: ["-c", "exec sleep 60"], output: .kept)
        let pid = try #require(command?.processIdentifier)
        command = nil
        #expect(try await CommandProcess.waitUntilEnded(pid, timeout: .seconds(10)))
    }
}

import Foundation
import ShortcutSyncChildProcess

extension CommandProcess {
    /// The real `shortcut-sync` executable run with `arguments`, its standard output and error
    /// kept apart: for tests of the command line (exit statuses, what it prints). `environment`
    /// sets (or, with nil, removes) variables of the tests' own, from which `DATABASE_URL` is
    /// always removed.
    public convenience init(_ arguments: [String], environment: [String: String?] = [:], standardInput: String? = nil) async throws {
        var changes: [String: String?] = ["DATABASE_URL": .none]
        changes.merge(environment) { $1 }
        try await self.init(executable: try Self.shortcutSync(), arguments: arguments, environment: changes,
                            standardInput: standardInput, output: .kept)
    }

    /// Runs the command to its end (killing it after `timeout`) and returns it.
    public static func run(_ arguments: [String], environment: [String: String?] = [:], standardInput: String? = nil,
                           timeout: Duration = .seconds(60)) async throws -> CommandProcess {
        let command = try await CommandProcess(arguments, environment: environment, standardInput: standardInput)
        guard try await command.waitForExit(timeout: timeout) else {
            command.forceStop()
            throw ServeProcessError("shortcut-sync \(arguments.joined(separator: " ")) did not end within \(timeout)")
        }
        return command
    }

    /// The `shortcut-sync` executable built beside the test bundle.
    static func shortcutSync() throws -> URL {
        let buildDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [buildDirectory, buildDirectory.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("shortcut-sync")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw ServeProcessError("the shortcut-sync executable is not beside the tests in \(buildDirectory.path); build it with `swift build`")
    }
}

public struct ServeProcessError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

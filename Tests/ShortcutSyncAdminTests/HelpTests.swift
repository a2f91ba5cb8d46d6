import Foundation
import ShortcutSyncChildProcess
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import Testing

/// A newcomer's first commands: every command's `--help` (and `help <command>`) prints its usage
/// and exits 0, a wrong flag is a usage error in two lines with exit status 2, and `--version`
/// says which version and schema this is. The commands are found by reading the help itself, so
/// that a command added later is checked too.
@Suite struct HelpTests {
    /// The names listed under SUBCOMMANDS in a help text.
    static func subcommands(in help: String) -> [String] {
        var names: [String] = []
        var inList = false
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("SUBCOMMANDS:") { inList = true; continue }
            guard inList else { continue }
            if line.trimmingCharacters(in: .whitespaces).isEmpty || !line.hasPrefix(" ") { inList = false; continue }
            // A name is indented by two spaces; its description's continuation lines are indented further.
            // "rebuild, worker": a name and its aliases.
            if line.hasPrefix("  "), !line.hasPrefix("   "), let name = line.split(separator: " ").first {
                names.append(String(name.trimmingCharacters(in: CharacterSet(charactersIn: ","))))
            }
        }
        return names
    }

    /// Every command path of the executable, the root's (empty) first, found through `--help`.
    static func commandPaths() async throws -> [[String]] {
        var found: [[String]] = []
        var queue: [[String]] = [[]]
        while let path = queue.first {
            queue.removeFirst()
            found.append(path)
            let help = try await CommandProcess.run(path + ["--help"])
            defer { help.forceStop() }
            try #require(path.count < 4 && help.output.contains("USAGE: " + (["shortcut-sync"] + path).joined(separator: " ")),
                         "\(path): \(help.output)")
            for name in subcommands(in: help.output) where name != "help" {
                queue.append(path + [name])
            }
        }
        return found
    }

    @Test func everyCommandsHelpPrintsItsUsageAndExitsZero() async throws {
        let paths = try await Self.commandPaths()
        #expect(paths.count > 20, "the commands: \(paths)")
        #expect(paths.contains(["admin", "projections", "status"]))
        for path in paths {
            let shown = path.isEmpty ? "shortcut-sync" : "shortcut-sync " + path.joined(separator: " ")
            for arguments in [path + ["--help"], path + ["-h"], path.isEmpty ? ["help"] : ["help"] + path] {
                let help = try await CommandProcess.run(arguments)
                defer { help.forceStop() }
                #expect(help.exitStatus == 0, "\(arguments): \(help.errorOutput)")
                #expect(help.output.contains("USAGE: \(shown)"), "\(arguments): \(help.output)")
                #expect(help.errorOutput.isEmpty, "\(arguments): \(help.errorOutput)")
            }
        }
    }

    @Test func aWrongFlagIsAUsageErrorInTwoLines() async throws {
        for path in try await Self.commandPaths() {
            let wrong = try await CommandProcess.run(path + ["--no-such-flag"])
            defer { wrong.forceStop() }
            let lines = wrong.errorOutput.split(separator: "\n")
            #expect(wrong.exitStatus == 2, "\(path): \(wrong.errorOutput)")
            #expect((1...2).contains(lines.count), "\(path): \(wrong.errorOutput)")
            // ArgumentParser names a missing required option before an unknown one.
            let first = String(lines.first ?? "")
            #expect(first.hasPrefix("error: ") && (first.contains("--no-such-flag") || first.contains("Missing expected argument")),
                    "\(path): \(wrong.errorOutput)")
            #expect(lines.last == "see 'shortcut-sync\(path.map { " " + $0 }.joined()) --help'", "\(path): \(wrong.errorOutput)")
            #expect(wrong.output.isEmpty)
        }
    }

    @Test func versionSaysTheVersionAndTheSchemaItMigratesTo() async throws {
        let version = try await CommandProcess.run(["--version"])
        defer { version.forceStop() }
        #expect(version.exitStatus == 0)
        let schema = try #require(try Migration.bundled().last?.version)
        #expect(version.output.trimmingCharacters(in: .whitespacesAndNewlines)
            .wholeMatch(of: try Regex("shortcut-sync [0-9]{4}\\.[0-9]{2}\\.[0-9]{2} \\(schema version \(schema)\\)")) != nil,
            "\(version.output)")
    }
}

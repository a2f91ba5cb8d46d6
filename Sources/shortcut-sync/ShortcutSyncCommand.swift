import ArgumentParser
import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

/// `shortcut-sync`: one executable for the service, its worker and the operators' tools.
@main
struct ShortcutSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shortcut-sync",
        abstract: "Keeps a person's Siri-style shortcuts in step across their devices.",
        version: versionText,
        subcommands: [
            ServeCommand.self, WorkerCommand.self, MigrateCommand.self, AdminCommand.self, DemoCommand.self, HealthCommand.self,
            BenchCommand.self,
        ]
    )

    /// This build's version, by its date of release.
    static let version = "2026.11.24"

    /// What `--version` prints: the version, and the schema version that `migrate` (and `serve`)
    /// bring a database to.
    static var versionText: String {
        let schema = (try? Migration.bundled().last?.version).flatMap { $0 }.map { "schema version \($0)" } ?? "schema unknown"
        return "shortcut-sync \(version) (\(schema))"
    }

    /// As ArgumentParser's, but a usage error exits with status 2 (DESIGN §7), not 64, and a
    /// command's failure is one line that says what to do (`CommandFailure`).
    static func main() async {
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exitForUsage(error)
        }
        do {
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch let error as ExitCode {
            exit(withError: error)
        } catch let error as CleanExit {
            exit(withError: error)
        } catch {
            // `--help`, `help <command>` and `--version` are parsed into ArgumentParser's own help
            // command, whose run throws the request: its text is printed, with status 0.
            if exitCode(for: error) == .success { exit(withError: error) }
            if exitCode(for: error) == .validationFailure { exitForUsage(error) }
            Foundation.exit(CommandFailure.report(error).rawValue)
        }
    }

    /// Help and `--version` exit 0 with their text (ArgumentParser's own); any other parse or
    /// validation error is a usage error: its message and where to read the usage, in two lines
    /// on standard error, and status 2.
    private static func exitForUsage(_ error: any Error) -> Never {
        guard exitCode(for: error) == .validationFailure else { exit(withError: error) }
        let message = CommandFailure.firstLine(Self.message(for: error))
        let command = commandPath(CommandLine.arguments.dropFirst())
        FileHandle.standardError.write(Data("error: \(ControlCharacters.escaped(message))\nsee '\(ControlCharacters.escaped(command)) --help'\n".utf8))
        Foundation.exit(2)
    }

    /// The command that `arguments` name, as typed: the root's name and the subcommands' names
    /// that lead the arguments.
    static func commandPath(_ arguments: some Sequence<String>) -> String {
        var command: any ParsableCommand.Type = Self.self
        var path = [configuration.commandName ?? "shortcut-sync"]
        for argument in arguments {
            guard let next = command.configuration.subcommands.first(where: { $0._commandName == argument }) else { break }
            command = next
            path.append(argument)
        }
        return path.joined(separator: " ")
    }
}

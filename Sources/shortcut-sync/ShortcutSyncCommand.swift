import ArgumentParser
import Foundation

/// `shortcut-sync`: one executable for the service, its worker and the operators' tools.
@main
struct ShortcutSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shortcut-sync",
        abstract: "Keeps a person's Siri-style shortcuts in step across their devices.",
        subcommands: [
            ServeCommand.self, WorkerCommand.self, MigrateCommand.self, AdminCommand.self, DemoCommand.self, HealthCommand.self,
            BenchCommand.self,
        ]
    )

    /// As ArgumentParser's, but a usage error exits with status 2 (DESIGN §7), not 64.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            guard code == .validationFailure else { exit(withError: error) }
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            Foundation.exit(2)
        }
    }
}

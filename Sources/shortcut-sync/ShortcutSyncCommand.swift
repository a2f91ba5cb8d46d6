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
            if exitCode(for: error) == .validationFailure { exitForUsage(error) }
            Foundation.exit(CommandFailure.report(error).rawValue)
        }
    }

    private static func exitForUsage(_ error: any Error) -> Never {
        guard exitCode(for: error) == .validationFailure else { exit(withError: error) }
        FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
        Foundation.exit(2)
    }
}

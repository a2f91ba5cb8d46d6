import ArgumentParser

/// `shortcut-sync`: one executable for the service, its worker and the operators' tools.
@main
struct ShortcutSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shortcut-sync",
        abstract: "Keeps a person's Siri-style shortcuts in step across their devices.",
        subcommands: [ServeCommand.self, WorkerCommand.self, MigrateCommand.self, HealthCommand.self, BenchCommand.self]
    )
}

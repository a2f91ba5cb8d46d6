import ArgumentParser
import Logging
import ShortcutSyncStore

/// `shortcut-sync migrate`: applies the migrations of `Schema/` that the database lacks.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "migrate", abstract: "Apply the schema migrations.")

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let logger = database.logger
        let applied = try await database.withDatabase { location in
            try await Migrator.migrate(location.url, logger: logger)
        }
        print(applied.isEmpty ? "The schema is up to date." : "Applied migrations: \(applied.map(String.init).joined(separator: ", ")).")
    }
}

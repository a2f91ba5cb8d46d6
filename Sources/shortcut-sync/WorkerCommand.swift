import ArgumentParser
import Logging
import PostgresNIO
import ServiceLifecycle
import ShortcutSyncStore
import ShortcutSyncWorker

/// `shortcut-sync worker`: the sync worker alone. Several may run; one is active at a time.
struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "worker", abstract: "Run the sync worker alone.")

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let logger = database.logger
        try await database.withDatabase { location in
            try await Migrator.migrate(location.url, logger: logger)
            let client = PostgresClient(configuration: try location.url.clientConfiguration(maximumConnections: 4), backgroundLogger: logger)
            let worker = SyncWorker(client: client, connectionConfiguration: try location.url.connectionConfiguration(), logger: logger)
            try await ServiceGroup.runUntilSignalled(location.services + [client, worker], logger: logger)
        }
    }
}

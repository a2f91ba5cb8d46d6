import ArgumentParser
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import ShortcutSyncServer
import ShortcutSyncStore

/// `shortcut-sync serve`: the HTTP API, and the sync worker in the same process.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Serve the HTTP API and run the sync worker.")

    @Option(help: "Address to listen on.")
    var host: String = "127.0.0.1"

    @Option(help: "Port to listen on.")
    var port: Int = 8080

    @Option(help: "The admin token that may create accounts (env SHORTCUT_SYNC_ADMIN_TOKEN). Made up and printed in embedded mode when absent.")
    var adminToken: String?

    @Flag(help: "Do not run the sync worker in this process (run `shortcut-sync worker` elsewhere).")
    var noWorker = false

    @Option(help: "/readyz reports degraded while more events than this wait to be folded.")
    var degradedLag: Int64 = 10_000

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let logger = database.logger
        let location = try await database.resolve()
        defer { location.close() }

        let environment = ProcessInfo.processInfo.environment
        var token = adminToken ?? environment["SHORTCUT_SYNC_ADMIN_TOKEN"]
        if token == nil || token!.isEmpty {
            guard location.embedded != nil else {
                throw ValidationError("an admin token is required with an external database: give --admin-token or SHORTCUT_SYNC_ADMIN_TOKEN")
            }
            token = Tokens.make(.admin)
        }

        let configuration = ServerConfiguration(
            host: host, port: port, database: location.url, adminToken: token!, runsWorker: !noWorker,
            degradedLag: degradedLag)
        let app = try await buildApplication(configuration, logger: logger)
        if location.embedded != nil {
            let banner = """
                ShortcutSync is serving on http://\(host):\(port)
                  embedded PostgreSQL: \(location.url.urlString)
                  admin token:         \(token!)

                """
            FileHandle.standardOutput.write(Data(banner.utf8))
        }
        try await ServiceGroup.runUntilSignalled([app], logger: logger)
    }
}

import ArgumentParser
import Foundation
import Logging
import ShortcutSyncBench
import ServiceLifecycle
import ShortcutSyncStore
import UnixSignals

/// `shortcut-sync bench stack-floor`: the stack's floor for a push, which `bench push` starts as
/// a child process of its own and measures beside the service (`StackFloor`); not listed.
struct StackFloorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stack-floor",
        abstract: "Serve the stack's floor for a push on the database of DATABASE_URL (bench push starts it).",
        shouldDisplay: false)

    @Option(help: "The loopback port to listen on.")
    var port: Int

    func validate() throws {
        guard (1...65_535).contains(port) else { throw ValidationError("--port must be 1 to 65535, not \(port)") }
        guard ProcessInfo.processInfo.environment["DATABASE_URL"] != nil else {
            throw ValidationError("the stack's floor reads its database from DATABASE_URL, which is not set")
        }
    }

    func run() async throws {
        let database = try DatabaseURL(ProcessInfo.processInfo.environment["DATABASE_URL"] ?? "")
        var logger = Logger(label: "stack-floor")
        logger.logLevel = .error
        try await StackFloor.services(database, port: port, signals: [.sigterm, .sigint], logger: logger).run()
    }
}

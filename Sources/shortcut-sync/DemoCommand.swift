import ArgumentParser
import Foundation
import Logging
import ShortcutSyncDemo
import ShortcutSyncStore

/// `shortcut-sync demo`: three simulated devices of one person converge, step by step.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Three simulated devices donate, assign phrases, go offline, delete and sync; their views converge.",
        discussion: "Exit status 0 when every device ends with the same view, 1 when they differ (and what differs is printed).")

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let logger = database.logger(defaultLevel: .error)
        let converged = try await database.withDatabase(logger: logger) { location in
            try await Migrator.migrate(location.url, logger: logger)
            let storage = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("shortcut-sync-demo-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: storage, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: storage) }
            let demo = Demo(database: location.url, storage: storage, logger: logger) { text in
                FileHandle.standardOutput.write(Data(text.utf8))
            }
            return try await cancellingOnSignal { try await demo.run() }
        }
        if !converged { throw ExitCode(1) }
    }
}

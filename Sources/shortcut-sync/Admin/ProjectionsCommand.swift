import ArgumentParser
import Foundation
import ShortcutSyncAdmin
import ShortcutSyncDomain
import ShortcutSyncStore

struct ProjectionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "projections", abstract: "The worker's projections: status, rebuild.", subcommands: [Status.self, Rebuild.self])

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status", abstract: "Checkpoint, head, lag, and what holds the log's horizon back.")

        @OptionGroup var options: AdminOptions

        func run() async throws {
            try await options.withOperator { try options.print(try await $0.status()) }
        }
    }

    struct Rebuild: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rebuild",
            abstract: "Replay the log beside the live projections and swap them in, while serving goes on.",
            discussion: "A running worker (serve or worker) keeps the live side moving meanwhile; the swap waits for it to reach the rebuild.")

        @OptionGroup var options: AdminOptions

        func run() async throws {
            let progress = ProgressLine(task: "rebuild")
            try await options.withOperator { admin in
                let report = try await admin.rebuild { await progress.update($0, of: $1) }
                await progress.finish()
                try options.print(report)
            }
        }
    }
}

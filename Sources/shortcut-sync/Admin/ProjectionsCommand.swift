import ArgumentParser
import Foundation
import ShortcutSyncAdmin
import ShortcutSyncDomain
import ShortcutSyncStore

struct ProjectionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "projections", abstract: "The projections: status, rebuild.", subcommands: [Status.self, Rebuild.self])

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status", abstract: "Accounts behind their head and parked, the epoch, and the rebuild tables.")

        @OptionGroup var options: AdminOptions

        func run() async throws {
            try await options.withOperator { try options.print(try await $0.status()) }
        }
    }

    struct Rebuild: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rebuild",
            abstract: "Replay the log beside the live projections and swap them in, while serving goes on.",
            discussion: "Pushes go on meanwhile and are caught up with; the swap holds them for a moment.")

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

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
            discussion: """
                Pushes go on meanwhile and are caught up with; the swap holds them for a moment. The rebuilt rows are not \
                compared with the live ones before the swap: a rebuild is how a change of the fold reaches the live rows, so \
                that they differ is its purpose. Run `admin verify` first to see what it would change (it rebuilds and compares \
                without swapping). A compacted account's rebuild starts from its snapshot, which every compaction checks against \
                the live rows, table by table, before it commits.
                """)

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

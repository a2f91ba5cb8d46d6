import ArgumentParser
import Foundation
import ShortcutSyncAdmin
import ShortcutSyncDomain
import ShortcutSyncStore

struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify", abstract: "Replay the log and compare with the live projections; exit 1 on any difference.")

    @OptionGroup var options: AdminOptions

    func run() async throws {
        let progress = ProgressLine(task: "verify")
        var consistent = true
        try await options.withOperator { admin in
            let report = try await admin.verify { await progress.update($0, of: $1) }
            await progress.finish()
            try options.print(report)
            consistent = report.consistent
        }
        if !consistent { throw ExitCode(1) }
    }
}

import ArgumentParser
import Foundation
import ShortcutSyncAdmin
import ShortcutSyncDomain
import ShortcutSyncStore

struct CompactCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Compact accounts' history through a horizon, keeping every view (--dry-run: say what it would free).",
        discussion: """
            Each account is compacted through the greatest clean cut at or below the version asked (its head without \
            --through or --before), in a transaction of its own. --before TIME takes ISO 8601 (without an offset, local time).
            """)

    @OptionGroup var options: AdminOptions
    @Option(help: "Only this account (default: every account, one at a time).") var account: IdentifierArgument?
    @Option(help: "Compact through this account version at most.") var through: Int64?
    @Option(help: "Compact the events recorded before this time at most.") var before: String?
    @Flag(name: .customLong("dry-run"), help: "Change nothing; say what would be removed.") var dryRun = false

    func validate() throws {
        if through != nil && before != nil { throw ValidationError("give --through or --before, not both") }
        if let through, through < 1 { throw ValidationError("--through must be an account version (1 or more)") }
        if let before, ISO8601.parse(before) == nil { throw ValidationError("--before must be an ISO 8601 time, e.g. 2026-11-22T10:30:00Z") }
    }

    func run() async throws {
        let target: CompactTarget = if let through { .through(through) } else if let before { .before(ISO8601.parse(before)!) } else { .head }
        let progress = ProgressLine(task: dryRun ? "compact (dry run)" : "compact", unit: "accounts")
        try await options.withOperator { admin in
            let report = try await admin.compact(account: account?.uuid, target: target, dryRun: dryRun) { await progress.update($0, of: $1) }
            await progress.finish()
            try options.print(report)
        }
    }
}

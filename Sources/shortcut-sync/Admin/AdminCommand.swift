import ArgumentParser
import Foundation
import Logging
import ShortcutSyncAdmin
import ShortcutSyncStore

/// `shortcut-sync admin …`: the operators' queries and maintenance (DESIGN §7).
///
/// Exit status: 0 ok, 1 a check failed (verify found differences, an import was refused),
/// 2 usage (bad arguments, unknown ids), 3 the database cannot be reached.
struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "Operators' queries, replay, rebuild, verify, compaction, export/import, erasure, token rotation (account and admin) and sign-out.",
        discussion: "Exit status: 0 ok, 1 a check failed, 2 usage, 3 database unreachable. --json prints JSON for scripts.",
        subcommands: [
            AccountsCommand.self, DevicesCommand.self, ShortcutsCommand.self, SuggestionsCommand.self, VoiceShortcutsCommand.self, EventsCommand.self,
            HistoryCommand.self, ProjectionsCommand.self, VerifyCommand.self, CompactCommand.self, ExportCommand.self, ImportCommand.self, EraseCommand.self,
            RotateTokenCommand.self, SignOutCommand.self, RotateAdminTokenCommand.self,
        ]
    )
}

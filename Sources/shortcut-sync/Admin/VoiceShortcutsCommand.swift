import ArgumentParser
import Foundation
import ShortcutSyncAdmin
import ShortcutSyncDomain
import ShortcutSyncStore

struct VoiceShortcutsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "voice-shortcuts", abstract: "List an account's voice shortcuts.")

    @OptionGroup var options: AdminOptions
    @Option(help: "The account's id.") var account: IdentifierArgument
    @Flag(help: "Only those whose phrase another voice shortcut owns.") var conflicts = false

    func run() async throws {
        try await options.withOperator { try options.print(try await $0.voiceShortcuts(account: account.uuid, conflictsOnly: conflicts)) }
    }
}

import ArgumentParser
import Foundation
import ShortcutSyncAdmin
import ShortcutSyncDomain
import ShortcutSyncStore

struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history", abstract: "Every event that touched a shortcut or its voice shortcuts, with its effect.")

    @OptionGroup var options: AdminOptions
    @Option(help: "The account's id.") var account: IdentifierArgument
    @Option(help: "The shortcut, as BUNDLE/IDENTIFIER.") var shortcut: String

    func validate() throws {
        _ = try shortcutID()
    }

    private func shortcutID() throws -> ShortcutID {
        guard let slash = shortcut.firstIndex(of: "/"), slash != shortcut.startIndex, shortcut.index(after: slash) != shortcut.endIndex else {
            throw ValidationError("--shortcut must be BUNDLE/IDENTIFIER, e.g. com.example.soup/tomato")
        }
        return ShortcutID(bundleId: String(shortcut[..<slash]), identifier: String(shortcut[shortcut.index(after: slash)...]))
    }

    func run() async throws {
        let id = try shortcutID()
        try await options.withOperator { try options.print(try await $0.history(account: account.uuid, shortcut: id)) }
    }
}

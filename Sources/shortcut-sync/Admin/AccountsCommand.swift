import ArgumentParser
import Foundation
import ShortcutSyncAdmin
import ShortcutSyncDomain
import ShortcutSyncStore

struct AccountsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "accounts", abstract: "List the accounts.")

    @OptionGroup var options: AdminOptions

    func run() async throws {
        try await options.withOperator { try options.print(try await $0.accounts()) }
    }
}

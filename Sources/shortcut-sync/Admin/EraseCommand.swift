import ArgumentParser
import Foundation
import ShortcutSyncAdmin
import ShortcutSyncDomain
import ShortcutSyncStore

struct EraseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "erase", abstract: "Remove an account's events, projections, devices and tokens, in one transaction.")

    @OptionGroup var options: AdminOptions
    @Option(help: "The account's id.") var account: IdentifierArgument
    @Flag(help: "Do not ask for confirmation.") var yes = false

    func run() async throws {
        if !yes {
            guard isatty(STDIN_FILENO) == 1 else {
                throw AdminOptions.exit(for: AdminUsageError("erase asks for confirmation on a terminal; give --yes to erase without one"))
            }
            FileHandle.standardError.write(Data("Erase account \(account.uuid.uuidString.lowercased()) and everything of it, for good? Type yes: ".utf8))
            guard readLine()?.trimmingCharacters(in: .whitespaces) == "yes" else {
                FileHandle.standardError.write(Data("Nothing was erased.\n".utf8))
                throw ExitCode(1)
            }
        }
        try await options.withOperator { try options.print(try await $0.erase(account: account.uuid)) }
    }
}

import ArgumentParser
import Foundation
import ShortcutSyncAdmin
import ShortcutSyncServer

/// `admin rotate-token`: a leaked account token is replaced without erasing the account.
struct RotateTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-token",
        abstract: "Give an account a new token; the old one stops working on every server at once. Prints the new one, once.")

    @OptionGroup var options: AdminOptions
    @Option(help: "The account's id.") var account: IdentifierArgument

    func run() async throws {
        let token = Tokens.make(.account)
        try await options.withOperator { admin in
            try await admin.rotateAccountToken(account: account.uuid, tokenHash: Tokens.hash(token))
            let text = options.json
                ? "{\"accountId\":\"\(account.uuid.uuidString.lowercased())\",\"accountToken\":\"\(token)\"}\n"
                : "account \(account.uuid.uuidString.lowercased()): its new token is\n\(token)\n(the old one no longer works; this one is shown only now)\n"
            FileHandle.standardOutput.write(Data(text.utf8))
        }
    }
}

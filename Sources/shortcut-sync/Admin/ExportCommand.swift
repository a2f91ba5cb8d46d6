import ArgumentParser
import Foundation
import ShortcutSyncAdmin
import ShortcutSyncDomain
import ShortcutSyncStore

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write an account, its devices and its events as NDJSON (see the README for the format).")

    @OptionGroup var options: AdminOptions
    @Option(help: "The account's id.") var account: IdentifierArgument
    @Option(help: "Write to this file instead of standard output.") var output: String?

    func run() async throws {
        try await options.withOperator { admin in
            let text = try await admin.export(account: account.uuid).joined(separator: "\n") + "\n"
            if let output {
                do {
                    try Data(text.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
                } catch {
                    throw AdminUsageError("cannot write \(output): \(error.localizedDescription)")
                }
            } else {
                FileHandle.standardOutput.write(Data(text.utf8))
            }
        }
    }
}

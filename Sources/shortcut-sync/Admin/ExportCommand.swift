import ArgumentParser
import Foundation
import ShortcutSyncAdmin
import ShortcutSyncDomain
import SecretFiles
import ShortcutSyncStore
#if canImport(Glibc)
import Glibc
#endif

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write an account, its devices and its events as NDJSON (the format: docs/operating.md).")

    @OptionGroup var options: AdminOptions
    @Option(help: "The account's id.") var account: IdentifierArgument
    @Option(help: "Write to this file instead of standard output.") var output: String?

    func run() async throws {
        try await options.withOperator { admin in
            let text = try await admin.export(account: account.uuid).joined(separator: "\n") + "\n"
            if let output {
                // Every event and the token hashes: owner-only from the moment the file exists, as
                // the secrets are written (a new file beside it, then renamed over the old one).
                let temporary = output + ".export-\(UUID().uuidString.prefix(8))"
                do {
                    try SecretFile.create(at: temporary, contents: text)
                    guard rename(temporary, output) == 0 else {
                        let failure = errno
                        unlink(temporary)
                        throw AdminUsageError("cannot write \(output): \(String(cString: strerror(failure)))")
                    }
                } catch let error as AdminUsageError {
                    throw error
                } catch {
                    throw AdminUsageError("cannot write \(output): \(error)")
                }
            } else {
                FileHandle.standardOutput.write(Data(text.utf8))
            }
        }
    }
}

import ArgumentParser
import Foundation
import ShortcutSyncAdmin
import ShortcutSyncDomain
import ShortcutSyncStore

struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Store an export: adds only what the database lacks (the same file twice adds nothing); all or nothing.")

    @OptionGroup var options: AdminOptions
    @Argument(help: "The export to read; standard input when absent or -.") var file: String?

    func run() async throws {
        let data: Data
        if let file, file != "-" {
            guard let read = FileManager.default.contents(atPath: file) else {
                throw AdminOptions.exit(for: AdminUsageError("cannot read \(file)"))
            }
            data = read
        } else {
            data = FileHandle.standardInput.readDataToEndOfFile()
        }
        let progress = ProgressLine(task: "import")
        try await options.withOperator { admin in
            let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            let contents = try AccountArchive.read(lines)
            await progress.update(lines.count, of: lines.count)
            let report = try await admin.importAccount(contents)
            await progress.finish()
            try options.print(report)
        }
    }
}

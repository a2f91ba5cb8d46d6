import ArgumentParser
import Foundation
import SecretFiles
import ShortcutSyncAdmin
import ShortcutSyncServer

/// `admin rotate-admin-token`: a new admin token without restarting a server. It is written to the
/// file the servers read it from, as `serve` writes the one it makes (owner-only), and announced
/// on the database: every server re-reads its file at once, and the old token is refused there.
/// As `serve`, it prints where the token is, never the token.
struct RotateAdminTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-admin-token",
        abstract: "Make a new admin token, write it to the admin token file, and make every server read it again at once.",
        discussion: """
            The new token is as strong as the one serve makes (256 random bits) and replaces the file's in one step \
            (owner-only from the start); it is never printed: read it from the file. The servers of the database \
            re-read their token file when this command announces it (within a second), and on SIGHUP: the old token \
            is refused by every server that reads this file. A server on another machine reads its own copy: put the \
            new token there and send it SIGHUP. A server given its token in SHORTCUT_SYNC_ADMIN_TOKEN keeps it until \
            restarted. With the embedded database the file is <data-dir>/admin-token; with DATABASE_URL give \
            --admin-token-file, the file your servers were started with.
            """)

    @OptionGroup var options: AdminOptions
    @Option(help: "The admin token file the servers read (serve --admin-token-file). Default with the embedded database: <data-dir>/admin-token.")
    var adminTokenFile: String?

    func run() async throws {
        let file: SecretFile
        if let adminTokenFile {
            file = SecretFile(URL(fileURLWithPath: adminTokenFile))
        } else if try options.database.givenURL() == nil {
            file = SecretFile(URL(fileURLWithPath: options.database.dataDir).appendingPathComponent("admin-token"))
        } else {
            throw AdminOptions.exit(for: AdminUsageError(
                "with DATABASE_URL, give --admin-token-file: the file your servers read the admin token from (serve --admin-token-file)"))
        }
        try await options.withOperator { admin in
            // The database answered: the file is written, then the servers are told to read it.
            do {
                try file.replace(with: Tokens.make(.admin))
            } catch {
                throw AdminUsageError("the admin token was not changed: \(error)")
            }
            try await admin.announceAdminTokenRotated()
            let text = options.json
                ? "{\"adminTokenFile\":\(Self.quoted(file.path)),\"announced\":true}\n"
                : """
                    the new admin token is in \(file.path) (owner-only; read it from there, it is not shown)
                    the servers that read this file take it now, and refuse the old one; others: put it in their file and send them SIGHUP

                    """
            FileHandle.standardOutput.write(Data(text.utf8))
        }
    }

    /// `text` as a JSON string.
    private static func quoted(_ text: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        return String(decoding: (try? encoder.encode(text)) ?? Data("\"\"".utf8), as: UTF8.self)
    }
}

import ArgumentParser
import Foundation
import ShortcutSyncApp

/// Where `serve` takes the admin token an operator gives it: the environment
/// (`SHORTCUT_SYNC_ADMIN_TOKEN`) or a file (`--admin-token-file`), never an argument, which any
/// user of the machine can read in the process list. A token shorter than 128 bits of hex (32
/// characters) is refused: it could be guessed. A file is read as the server reads it again on
/// SIGHUP (`AdminTokenFile`).
enum AdminTokenSource {
    /// The token given, nil when none was; throws a usage error for a short one or an unreadable file.
    static func given(file: String?, environment: [String: String]) throws -> String? {
        do {
            if let file {
                let tokenFile = AdminTokenFile(URL(fileURLWithPath: file))
                if FileManager.default.isReadableFile(atPath: file), !tokenFile.isOwnerOnly {
                    FileHandle.standardError.write(Data("warning: \(file) may be read by other users: make it owner-only (chmod 600)\n".utf8))
                }
                return try tokenFile.read()
            } else if let value = environment["SHORTCUT_SYNC_ADMIN_TOKEN"], !value.isEmpty {
                try AdminTokenFile.check(value)
                return value
            }
            return nil
        } catch let problem as AdminTokenFile.Problem {
            throw ValidationError(problem.unreadable ? "--admin-token-file: \(problem)" : problem.description)
        }
    }
}

import ArgumentParser
import Foundation
import SecretFiles

/// Where `serve` takes the admin token an operator gives it: the environment
/// (`SHORTCUT_SYNC_ADMIN_TOKEN`) or a file (`--admin-token-file`), never an argument, which any
/// user of the machine can read in the process list. A token shorter than 128 bits of hex (32
/// characters) is refused: it could be guessed.
enum AdminTokenSource {
    static let minimumLength = 32

    /// The token given, nil when none was; throws a usage error for a short one or an unreadable file.
    static func given(file: String?, environment: [String: String]) throws -> String? {
        let token: String
        if let file {
            guard let data = FileManager.default.contents(atPath: file), data.count <= 4096 else {
                throw ValidationError("--admin-token-file: cannot read \(file)")
            }
            if !SecretFile(URL(fileURLWithPath: file)).isOwnerOnly {
                FileHandle.standardError.write(Data("warning: \(file) may be read by other users: make it owner-only (chmod 600)\n".utf8))
            }
            token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        } else if let value = environment["SHORTCUT_SYNC_ADMIN_TOKEN"], !value.isEmpty {
            token = value
        } else {
            return nil
        }
        try check(token)
        return token
    }

    /// Refuses a token shorter than 32 characters, or one made of fewer than 8 different ones.
    static func check(_ token: String) throws {
        guard token.count >= minimumLength, Set(token).count >= 8 else {
            throw ValidationError(
                "the admin token must carry at least 128 bits: \(minimumLength) or more random characters (openssl rand -hex 32 makes one)")
        }
    }
}

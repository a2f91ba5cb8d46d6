import Foundation

extension DatabaseURL {
    /// The URL with its password filled in the ways libpq's tools take one, when the URL has none:
    /// `PGPASSWORD`, else the first matching line of the password file (`PGPASSFILE`, or
    /// `~/.pgpass`). A password file that others may read is ignored, as libpq ignores it.
    public func withPassword(environment: [String: String] = ProcessInfo.processInfo.environment) -> DatabaseURL {
        guard password == nil else { return self }
        var copy = self
        if let given = environment["PGPASSWORD"], !given.isEmpty {
            copy.password = given
        } else if let file = Self.passwordFilePath(environment: environment),
                  let text = Self.readOwnerOnly(file) {
            copy.password = PasswordFile(text: text).password(
                host: socketDirectory == nil ? host : "localhost", port: port, database: database, username: username)
        }
        return copy
    }

    /// Where the password file is: `PGPASSFILE`, else `.pgpass` in the home directory.
    static func passwordFilePath(environment: [String: String]) -> String? {
        if let file = environment["PGPASSFILE"], !file.isEmpty { return file }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return home + "/.pgpass"
    }

    /// The file's text if it is a regular file that only its owner may read or write.
    private static func readOwnerOnly(_ path: String) -> String? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              attributes[.type] as? FileAttributeType == .typeRegular,
              let permissions = attributes[.posixPermissions] as? Int, permissions & 0o077 == 0,
              let data = FileManager.default.contents(atPath: path), data.count <= 1 << 20 else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A libpq password file: lines of `hostname:port:database:username:password`, where `*` in any
/// of the first four fields matches anything, `\:` and `\\` stand for `:` and `\`, and lines
/// starting with `#` are comments. The first line that matches gives the password.
public struct PasswordFile: Sendable {
    public var entries: [[String]]

    public init(text: String) {
        entries = text.split(whereSeparator: \.isNewline).compactMap { line in
            guard !line.hasPrefix("#") else { return nil }
            let fields = Self.fields(of: Substring(line))
            return fields.count == 5 ? fields : nil
        }
    }

    public func password(host: String, port: Int, database: String, username: String) -> String? {
        let wanted = [host, String(port), database, username]
        return entries.first { entry in
            zip(entry.prefix(4), wanted).allSatisfy { $0 == "*" || $0 == $1 }
        }?[4]
    }

    /// The colon-separated fields of a line, with its escapes undone; the last field takes the rest.
    private static func fields(of line: Substring) -> [String] {
        var fields: [String] = []
        var current = ""
        var escaped = false
        for character in line {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == ":" && fields.count < 4 {
                fields.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        fields.append(current)
        return fields
    }
}

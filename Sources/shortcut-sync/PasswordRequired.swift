import ArgumentParser
import EmbeddedPostgres
import Foundation
import Logging
import ShortcutSyncStore

/// PostgreSQL asked for a password and none was given: says where one can come from.
struct PasswordRequired: Error, CustomStringConvertible {
    var url: DatabaseURL
    var dataDir: String

    var description: String {
        "PostgreSQL at \(url.socketDirectory ?? "\(url.host):\(url.port)") asks for user \(url.username)'s password and none was given: "
            + "put it in PGPASSWORD, in a line of ~/.pgpass (or the file PGPASSFILE names), or in the URL; "
            + "the embedded PostgreSQL of `serve --data-dir \(dataDir)` keeps it in \(dataDir)/embedded-postgres.password "
            + "(or pass --data-dir \(dataDir) instead of a URL)"
    }
}

import Foundation
import PostgresNIO
import ShortcutSyncChildProcess
import ShortcutSyncDatabaseTestSupport
@testable import ShortcutSyncStore
import Testing

/// Issue 65, item 10: the password Citus's nodes share goes into `pg_dist_authinfo` as a
/// connection string's value, quoted as libpq reads it: a password with a space, a quote or a
/// backslash is read whole (here by libpq itself, through psql), not cut or read as more keywords.
@Suite struct ConninfoValueTests {
    @Test func aPasswordWithASpaceAQuoteAndABackslashIsReadWhole() async throws {
        #expect(CitusDatabase.conninfoValue("plain") == "'plain'")
        #expect(CitusDatabase.conninfoValue(#"a b'c\d"#) == #"'a b\'c\\d'"#)
        try await TestDatabase.withClient { client, url in
            let role = "conninfo_\(UInt32.random(in: 0...UInt32.max))", password = #"a b'c\d host=elsewhere"#
            try await client.query(PostgresQuery(unsafeSQL: "CREATE ROLE \(role) LOGIN PASSWORD '\(password.replacingOccurrences(of: "'", with: "''"))'"))
            let conninfo = "host=\(url.host) port=\(url.port) dbname=\(url.database) user=\(role) password=" + CitusDatabase.conninfoValue(password)
            let psql = try await CommandProcess(executable: URL(fileURLWithPath: "/usr/bin/env"), arguments: ["psql", conninfo, "-Atc", "SELECT current_user"],
                                                output: .kept)
            defer { psql.forceStop() }
            #expect(try await psql.waitForExit(timeout: .seconds(30)))
            #expect(psql.exitStatus == 0 && psql.output.trimmingCharacters(in: .whitespacesAndNewlines) == role, "\(psql.errorOutput)")
            try await client.query(PostgresQuery(unsafeSQL: "DROP ROLE \(role)"))
        }
    }
}

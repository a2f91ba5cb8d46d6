import ArgumentParser
import EmbeddedPostgres
import Foundation
import Logging
import ShortcutSyncAdmin
import ShortcutSyncApp
import ShortcutSyncDomain
import ShortcutSyncStore

/// What every `admin` command takes: where the database is, and `--json`.
struct AdminOptions: ParsableArguments {
    @OptionGroup var database: DatabaseOptions

    @Flag(help: "Print JSON (stable field names: docs/operating.md) instead of a table.")
    var json = false

    /// Runs `body` with an `Operator` on the database (the embedded one under `--data-dir`
    /// when no URL is given, joined if a `serve` runs on it), and turns failures into a one-line
    /// message and the exit status of `AdminCommand`.
    func withOperator(_ body: (Operator) async throws -> Void) async throws {
        // Operators read tables: the service's own logs show only errors unless --log-level asks.
        let logger = database.logger(defaultLevel: .error)
        do {
            try await reach(logger: logger) { location in
                try await ShortcutSyncApp.withOperator(database: location.url, logger: logger, body)
            }
        } catch let error as ExitCode {
            throw error
        } catch {
            throw Self.exit(for: error)
        }
    }

    /// Prints a report as a table or as JSON. The text is shown with its control characters
    /// escaped, headings too (a table's cells already are); JSON escapes them itself, exactly.
    func print(_ report: some AdminReport) throws {
        let text = json ? try ScriptJSON.encode(report) : ControlCharacters.escaped(report.text, keepingLineBreaks: true)
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// Runs `body` with the database, once one connection to it was made: a server that cannot
    /// be reached fails here, in seconds, with exit status 3 (a pool would keep trying).
    private func reach(logger: Logger, _ body: (DatabaseLocation) async throws -> Void) async throws {
        if let parsed = try database.givenURL() {
            do {
                try await parsed.checkConnection(logger: logger)
            } catch {
                switch DatabaseFailure(error) {
                case .refused(_, missingDatabase: true):
                    break  // The server answers; its database does not exist yet, and is created next.
                case .passwordRequired:
                    throw PasswordRequired(url: parsed, dataDir: database.dataDir)
                case .refused, .answered:
                    throw error  // The server answered and refused (a wrong password, an unknown user): as every command says it.
                case .unreachable(let reason):
                    throw Unreachable(detail: "cannot reach PostgreSQL at \(parsed.host):\(parsed.port) (\(reason))")
                case nil:
                    throw Unreachable(detail: "cannot reach PostgreSQL at \(parsed.host):\(parsed.port) (\(DatabaseFailure.reason(error)))")
                }
            }
        }
        do {
            try await database.withDatabase(logger: logger, body)
        } catch let error as EmbeddedPostgres.Failure {
            throw Unreachable(detail: "the embedded PostgreSQL under \(database.dataDir) did not start: \(error)")
        }
    }

    struct Unreachable: Error {
        var detail: String
    }

    static func exit(for error: any Error) -> ExitCode {
        let (message, code): (String, Int32) = switch error {
        case let error as Unreachable:
            ("\(error.detail): \(CommandFailure.startTheDatabase)", 3)
        case let error as AdminUsageError:
            (error.description, 2)
        case let error as DatabaseURL.ParseError:
            ("\(error)", 2)
        case let error as AccountArchive.LineError:
            ("the file was not imported, nothing of it is stored: \(error)", 1)
        case let error as ImportConflict:
            ("the file was not imported, nothing of it is stored: \(error)", 1)
        default:
            // The database away, or anything else: as every command says it.
            CommandFailure.describe(error)
        }
        return CommandFailure.report(message, status: code, error: error)
    }
}

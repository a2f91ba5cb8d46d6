import ArgumentParser
import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

/// A command's failure as an operator reads it (DESIGN §7): one line on standard error that says
/// what went wrong and what to do, with no library's internal description in it, and the exit
/// status (3: the database cannot be reached; 1: anything else). The whole error, without bound
/// values (`LoggedError`), is printed after it only with `--log-level debug` or `trace`.
enum CommandFailure {
    /// What to do when PostgreSQL cannot be reached.
    static let startTheDatabase = "start the database, or point --database-url (or DATABASE_URL) at one that runs"

    /// Prints `error`'s line (and its detail when asked) and returns the exit status.
    static func report(_ error: any Error, arguments: [String] = CommandLine.arguments) -> ExitCode {
        let (line, status) = describe(error)
        return report(line, status: status, error: error, arguments: arguments)
    }

    /// Prints `line` (and `error`'s detail when asked) and returns `status` as the exit status.
    static func report(_ line: String, status: Int32, error: any Error, arguments: [String] = CommandLine.arguments) -> ExitCode {
        // What an error names may come from a file or a row (an import's line, an identifier):
        // its control characters are shown escaped, so that nothing it holds reaches the
        // terminal as a command or forges a line (issue 65, item 7).
        var text = "error: \(ControlCharacters.escaped(line))\n"
        if wantsDetail(arguments) { text += "detail: \(ControlCharacters.escaped("\(LoggedError(error))"))\n" }
        FileHandle.standardError.write(Data(text.utf8))
        return ExitCode(status)
    }

    static func describe(_ error: any Error) -> (line: String, status: Int32) {
        if let error = error as? PasswordRequired {
            return ("\(error)", 3)
        }
        switch DatabaseFailure(error) {
        case .unreachable(let reason):
            return ("cannot reach PostgreSQL (\(reason)): \(startTheDatabase)", 3)
        case .refused(let message, _):
            return ("PostgreSQL refused the connection (\(message)): check --database-url (or DATABASE_URL), PGPASSWORD and ~/.pgpass", 3)
        case .passwordRequired:
            return ("PostgreSQL asks for a password and none was given: check --database-url (or DATABASE_URL), PGPASSWORD and ~/.pgpass", 3)
        case .answered(let message):
            return ("PostgreSQL answered: \(message)", 1)
        case nil:
            return (firstLine(String(describing: error)), 1)
        }
    }

    static func firstLine(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: true).first.map(String.init) ?? text
    }

    private static func wantsDetail(_ arguments: [String]) -> Bool {
        for (index, argument) in arguments.enumerated() {
            if argument == "--log-level", index + 1 < arguments.count, ["debug", "trace"].contains(arguments[index + 1]) { return true }
            if argument == "--log-level=debug" || argument == "--log-level=trace" { return true }
        }
        return false
    }
}

import PostgresNIO
#if canImport(Glibc)
import Glibc
#endif

/// What went wrong with the database, as its users need to tell it apart: the store's own
/// classification of an error, so that no other module reads the driver's error types (the
/// command line turns each case into one line and an exit status).
public enum DatabaseFailure: Sendable, Hashable {
    /// No connection could be made, or the one in use was lost; `reason` in a few words (the
    /// operating system's where it gave one).
    case unreachable(reason: String)
    /// The server asks for a password and none was given.
    case passwordRequired
    /// The server refused the session: its authentication failed, or its database does not
    /// exist (`missingDatabase`); `message` is the server's.
    case refused(message: String, missingDatabase: Bool)
    /// The server answered a statement with an error; `message` is the first line of its.
    case answered(message: String)

    /// The failure `error` is, or nil when it is not the database's.
    public init?(_ error: any Error) {
        if let psql = error as? PSQLError, psql.code == .authMechanismRequiresPassword {
            self = .passwordRequired
        } else if DatabaseAvailability.isUnavailable(error) {
            self = .unreachable(reason: Self.reason(error))
        } else if let psql = error as? PSQLError, let message = psql.serverInfo?[.message], let state = psql.serverInfo?[.sqlState] {
            // Authentication and a missing database are the server's answers at connect time.
            switch state {
            case "28P01", "28000": self = .refused(message: message, missingDatabase: false)
            case "3D000": self = .refused(message: message, missingDatabase: true)
            default: self = .answered(message: Self.firstLine(message))
            }
        } else {
            return nil
        }
    }

    /// Why a connection could not be made or was lost, in a few words, never a library's type names.
    public static func reason(_ error: any Error) -> String {
        if let psql = error as? PSQLError, let message = psql.serverInfo?[.message] { return firstLine(message) }
        if case StoreError.connectionClosed? = error as? StoreError { return "the connection closed" }
        let text = String(reflecting: error)
        let known = [("Connection refused", "connection refused"), ("timed out", "timed out"), ("Timeout", "timed out"),
                     ("No route to host", "no route to host"), ("Network is unreachable", "network unreachable"),
                     ("Name or service not known", "host not found"), ("nodename nor servname", "host not found"),
                     ("Connection reset", "connection reset"), ("serverClosedConnection", "the server closed the connection"),
                     ("poolClosed", "shutting down")]
        if let known = known.first(where: { text.contains($0.0) }) { return known.1 }
        // The operating system's words for any other error it gave (a broken pipe, an address
        // it could not assign…), never the library's type names.
        if let match = text.firstMatch(of: /errno: ([0-9]{1,4})\)/), let number = Int32(match.1) {
            return String(cString: strerror(number)).lowercased()
        }
        return "no connection"
    }

    static func firstLine(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: true).first.map(String.init) ?? text
    }
}

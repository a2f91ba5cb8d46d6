import Logging
import PostgresNIO

/// An error as a log line above debug level may show it: what went wrong, never the values a
/// statement was bound to (DESIGN §5: event bodies are the person's data; token hashes are
/// secrets).
///
/// `String(reflecting:)` of a `PSQLError` carries its query with every bind and the server's
/// detail (the key that collided, the failing row). Here a `PSQLError` is its kind, SQLSTATE,
/// the server's message and the names of the constraint, table and column at fault; the detail,
/// the hint, the query and the binds are left out, and so is the message of a data exception
/// (class 22: "invalid input syntax for type uuid: …" quotes the value). A statement refused as
/// not supported (0A000, what Citus answers to a form it cannot distribute) is named by its text,
/// placeholders and all. An error that wraps one is its type and that. Any other error is its
/// `description`.
public struct LoggedError: CustomStringConvertible, Sendable {
    public let description: String

    public init(_ error: any Error) {
        description = Self.describe(error)
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case let error as PSQLError:
            return describe(error)
        case let error as PostgresDecodingError:
            // `postgresData` is the cell: left out.
            return "PostgresDecodingError(code: \(error.code), column: \(error.columnName), type: \(error.postgresType))"
        case is any CustomStringConvertible:
            return String(describing: error)
        default:
            // The default description of a type without one prints its fields with
            // `String(reflecting:)`: a PSQLError inside would bring its query along.
            if let inner = wrappedDatabaseError(in: error, depth: 0) {
                return "\(type(of: error)): \(describe(inner))"
            }
            return String(describing: error)
        }
    }

    private static func describe(_ error: PSQLError) -> String {
        var parts = ["code: \(error.code)"]
        if let info = error.serverInfo {
            if let state = info[.sqlState] { parts.append("sqlState: \(state)") }
            if let message = info[.message] {
                let quotesValues = info[.sqlState]?.hasPrefix("22") ?? true
                parts.append(quotesValues ? "message: (left out: a data exception's message may quote a value)" : "message: \(message)")
            }
            if let constraint = info[.constraintName] { parts.append("constraint: \(constraint)") }
            if let table = info[.tableName] { parts.append("table: \(table)") }
            if let column = info[.columnName] { parts.append("column: \(column)") }
            // A statement the server will not run as written (on Citus: a form it cannot
            // distribute, "could not run distributed query with FOR UPDATE/SHARE commands"): the
            // statement's text is named, which holds placeholders ($1 …), never the bound values.
            if info[.sqlState] == "0A000", let sql = error.query?.sql {
                let text = sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
                parts.append("statement: \(text.count > 300 ? text.prefix(300) + "…" : text)")
            }
        }
        if let underlying = error.underlying {
            parts.append("underlying: \(describe(underlying))")
        }
        return "PSQLError(\(parts.joined(separator: ", ")))"
    }

    /// A `PSQLError` or `PostgresDecodingError` among the fields of `value`, a few levels down.
    private static func wrappedDatabaseError(in value: Any, depth: Int) -> (any Error)? {
        guard depth < 4 else { return nil }
        for child in Mirror(reflecting: value).children {
            if child.value is PSQLError || child.value is PostgresDecodingError { return child.value as? any Error }
            if let found = wrappedDatabaseError(in: child.value, depth: depth + 1) { return found }
        }
        return nil
    }
}

extension Logger {
    /// Logs `message` at `level` with `error` under `"error"` as a `LoggedError` (no bind values),
    /// and, when this logger logs debug, the same message again at debug level with the error in
    /// full (`String(reflecting:)`: query, binds, the server's detail) for whoever debugs.
    public func log(
        level: Logger.Level, _ message: @autoclosure () -> Logger.Message, error: any Error,
        metadata: @autoclosure () -> Logger.Metadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        let metadata = metadata()
        log(level: level, message(), metadata: metadata.merging(["error": "\(LoggedError(error))"]) { $1 },
            file: file, function: function, line: line)
        if logLevel <= .debug, level > .debug {
            log(level: .debug, "\(message()) (the error in full)",
                metadata: metadata.merging(["error": "\(String(reflecting: error))"]) { $1 },
                file: file, function: function, line: line)
        }
    }
}

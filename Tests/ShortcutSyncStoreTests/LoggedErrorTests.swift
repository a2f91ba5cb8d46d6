import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import Synchronization
import Testing

/// Logs above debug level carry no SQL parameter values (DESIGN §5): a `PSQLError` in full holds
/// the query's binds and the server's detail; `LoggedError` holds neither.
@Suite struct LoggedErrorTests {
    /// The error a unique violation of a statement bound to `marker` throws.
    static func uniqueViolation(marker: String) async throws -> PSQLError {
        try await refusal("the second insert") { client in
            try await client.query("CREATE TABLE secrets_marker (body text PRIMARY KEY)")
            try await client.query("INSERT INTO secrets_marker (body) VALUES (\(marker))")
            try await client.query("INSERT INTO secrets_marker (body) VALUES (\(marker))")
        }
    }

    /// The error `body` throws on a fresh database; an issue if it throws none.
    static func refusal(_ what: String, _ body: (PostgresClient) async throws -> Void) async throws -> PSQLError {
        try await TestDatabase.withClient { client, _ in
            do {
                try await body(client)
            } catch let error as PSQLError {
                return error
            }
            Issue.record("\(what) was not refused")
            throw CancellationError()
        }
    }

    @Test func aUniqueViolationIsLoggedWithItsStateAndConstraintButNotItsBindValue() async throws {
        let marker = "body-marker-\(UUID())"
        let error = try await Self.uniqueViolation(marker: marker)
        // The premise: in full, the error carries the bound value (in the query's binds and the detail).
        #expect(String(reflecting: error).contains(marker))

        let logged = LoggedError(error).description
        #expect(!logged.contains(marker), "\(logged)")
        #expect(logged.contains("23505"), "\(logged)")
        #expect(logged.contains("secrets_marker_pkey"), "\(logged)")
        #expect(logged.contains("duplicate key value violates unique constraint"), "\(logged)")
    }

    /// A statement the server refuses as not supported (Citus's refusals are 0A000 too) is named
    /// with the refusal, by its text, without its bound values.
    @Test func aRefusedStatementIsNamedWithoutItsBindValues() async throws {
        let marker = "refused-marker-\(UUID())"
        let error = try await Self.refusal("the statement") { client in
            try await client.query("SELECT count(*) FROM events WHERE type = \(marker) FOR UPDATE")
        }
        let logged = LoggedError(error).description
        #expect(logged.contains("0A000"), "\(logged)")
        #expect(logged.contains("statement: SELECT count(*) FROM events WHERE type = $1 FOR UPDATE"), "\(logged)")
        #expect(!logged.contains(marker), "\(logged)")
    }

    @Test func aDataExceptionsMessageWhichQuotesTheValueIsLeftOut() async throws {
        let marker = "not-a-uuid-\(UUID())"
        let error: PSQLError? = try await TestDatabase.withClient { client, _ in
            do {
                try await client.query("SELECT \(marker)::uuid")
                return nil
            } catch let error as PSQLError {
                return error
            }
        }
        let refused = try #require(error, "the cast was not refused")
        #expect(refused.serverInfo?[.message]?.contains(marker) == true, "the server's message quotes the value")
        let logged = LoggedError(refused).description
        #expect(!logged.contains(marker), "\(logged)")
        #expect(logged.contains("22P02"), "\(logged)")
    }

    /// An error type without a description of its own prints its fields in full.
    enum Wrapper: Error {
        case failed(any Error)
    }

    @Test func anErrorWrappingAPSQLErrorIsLoggedWithoutItsBindValue() async throws {
        let marker = "wrapped-marker-\(UUID())"
        let wrapped = Wrapper.failed(try await Self.uniqueViolation(marker: marker))
        #expect(String(describing: wrapped).contains(marker), "the premise: the default description reflects the PSQLError")

        let logged = LoggedError(wrapped).description
        #expect(!logged.contains(marker), "\(logged)")
        #expect(logged.contains("Wrapper"), "\(logged)")
        #expect(logged.contains("23505"), "\(logged)")
    }

    @Test func aWarningCarriesTheLoggedErrorAndOnlyADebugLoggerGetsTheErrorInFull() async throws {
        let marker = "logged-marker-\(UUID())"
        let error = try await Self.uniqueViolation(marker: marker)

        let atInfo = RecordingLogHandler.logger(level: .info)
        atInfo.logger.log(level: .warning, "a statement failed", error: error, metadata: ["account": "a"])
        let infoLines = atInfo.handler.lines
        #expect(infoLines.count == 1)
        #expect(infoLines.first?.level == .warning)
        #expect(infoLines.first?.metadata["account"] == "a")
        #expect(infoLines.first?.metadata["error"]?.contains("23505") == true)
        #expect(!infoLines.contains { $0.text.contains(marker) }, "\(infoLines)")

        let atDebug = RecordingLogHandler.logger(level: .debug)
        atDebug.logger.log(level: .error, "a statement failed", error: error)
        let debugLines = atDebug.handler.lines
        #expect(debugLines.map(\.level) == [.error, .debug])
        #expect(!debugLines[0].text.contains(marker), "the error line holds no bind value even at debug: \(debugLines[0])")
        #expect(debugLines[1].text.contains(marker), "the debug line holds the error in full")
    }
}

/// A log handler that keeps what it is given.
final class RecordingLogHandler: LogHandler, Sendable {
    struct Line: Sendable, CustomStringConvertible {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
        var text: String { "\(message) \(metadata)" }
        var description: String { "\(level): \(text)" }
    }

    private let recorded = Mutex<[Line]>([])
    var lines: [Line] { recorded.withLock { $0 } }

    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }
    var logLevel: Logger.Level {
        get { level.withLock { $0 } }
        set { level.withLock { $0 = newValue } }
    }
    private let level = Mutex(Logger.Level.info)

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
             file: String, function: String, line: UInt) {
        let flat = (metadata ?? [:]).mapValues { "\($0)" }
        recorded.withLock { $0.append(Line(level: level, message: "\(message)", metadata: flat)) }
    }

    static func logger(level: Logger.Level) -> (logger: Logger, handler: RecordingLogHandler) {
        let handler = RecordingLogHandler()
        var logger = Logger(label: "recording") { _ in handler }
        logger.logLevel = level
        return (logger, handler)
    }
}

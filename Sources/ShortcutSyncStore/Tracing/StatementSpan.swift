import Tracing

/// What a statement does, as OpenTelemetry's database conventions name it (`db.operation.name`).
public enum StatementOperation: String, Sendable {
    case select, insert, update, notify

    var name: String { rawValue.uppercased() }
}

/// Runs `body`, the statement(s) `summary` names, in a client span as OpenTelemetry's database
/// conventions describe one (`db.system.name`, `db.operation.name`, `db.collection.name`,
/// `db.query.summary`). PostgresNIO makes no spans of its own. Without a tracer the span is
/// PostgreSQL's no-op one and nothing is recorded.
public func withStatementSpan<T>(
    _ summary: String, _ operation: StatementOperation, _ collection: String,
    isolation: isolated (any Actor)? = #isolation,
    _ body: () async throws -> T
) async throws -> T {
    try await withSpan(summary, ofKind: .client, isolation: isolation) { span in
        if span.isRecording {
            span.attributes["db.system.name"] = "postgresql"
            span.attributes["db.operation.name"] = operation.name
            span.attributes["db.collection.name"] = collection
            span.attributes["db.query.summary"] = summary
        }
        return try await body()
    }
}

import Foundation
import HTTPTypes
import CoreMetrics
import OpenAPIRuntime
import ShortcutSyncDomain
import ShortcutSyncStore

/// Answers `push` itself, from the request's bytes, so that a push is decoded once, by
/// `PushJSON`, and never by the generated server.
///
/// Measured with `perf` during `bench push` (4 devices × 100-event pushes), decoding took 63 %
/// of the service's CPU: 33 % in the generated types' `Decodable` and 30 % in `JSONDecoder`
/// reading the same bytes into domain events. `PushJSON` says what both said (`PushJSONTests`).
/// The middleware runs inside `ProblemMiddleware`, so errors are answered as for every other
/// operation; `AuthenticationMiddleware` checked the device's token before the body was read;
/// the content type is checked as the generated server checks it.
struct PushMiddleware: ServerMiddleware {
    let api: SyncAPI
    /// Each account's push budget: a push bigger than what is left gets `429` before anything of
    /// it is stored (an account already over it was refused before its body was read).
    let budget: PushBudget
    /// The pushes run at once, and how long one waits to start (`PushGate`).
    let gate: PushGate

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard operationID == "push" else { return try await next(request, body, metadata) }
        let (device, account) = try api.requireDevice()
        try Self.requireJSON(request.headerFields[.contentType])
        // PushAdmissionMiddleware has refused an account over its budget or its pushes under way,
        // and BodyLimitMiddleware bodies over the limit.
        let bytes = if let body { try await [UInt8](collecting: body, upTo: Limits.maxPushBytes + 1) } else { [UInt8]() }
        let events = try PushJSON.events(in: bytes)
        if let wait = budget.charge(account: account, events: events.count) { throw overBudget(wait) }
        let accepted = try await gate.run { try await api.push(events, account: account, device: device) }
        var response = HTTPResponse(status: .ok)
        response.headerFields[.contentType] = "application/json; charset=utf-8"
        return (response, HTTPBody(#"{"lastAcceptedSeq":\#(accepted.lastAcceptedSeq),"version":\#(accepted.version)}"#))
    }

    private func overBudget(_ wait: Int) -> APIProblem {
        ServerMetrics.pushesOverBudget.increment()
        return APIProblem.overBudget(retryAfter: wait, budget.configuration)
    }

    /// As the generated server decides: no content type, a wildcard, or `application/json` with
    /// any parameters is JSON (a value that does not parse as a media type counts as none);
    /// any other type is 415.
    static func requireJSON(_ contentType: String?) throws {
        guard let contentType else { return }
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        let parts = mediaType.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return }
        if parts[1] == "*" || mediaType == "application/json" { return }
        throw APIProblem(status: 415, title: "Unsupported Media Type",
                         detail: "a push is application/json, not \(contentType)")
    }
}

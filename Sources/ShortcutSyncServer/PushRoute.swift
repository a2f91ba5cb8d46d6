import CoreMetrics
import Foundation
import HTTPTypes
import Hummingbird
import ShortcutSyncDomain
import ShortcutSyncStore

/// `POST /v1/sync/push`, a plain route: the push is decoded once, by `PushJSON`, from the bytes
/// `BodyLimitMiddleware` collected, and never by the generated server.
///
/// Measured with `perf` during `bench push` (4 devices × 100-event pushes), decoding through the
/// generated types took 63 % of the service's CPU: 33 % in their `Decodable` and 30 % in
/// `JSONDecoder` reading the same bytes into domain events. `PushJSON` says what both said
/// (`PushJSONTests`). The generated server registers every other operation; this one is left out
/// of its routes (`GeneratedRoutes`).
///
/// Before it runs, `AuthenticationMiddleware` checked the device's token, `PushAdmissionMiddleware`
/// refused an account over its budget or its pushes under way, and `BodyLimitMiddleware` a body
/// over the limit or late. Here: the content type, as the generated server checks it; the
/// events; the budget, charged by the events; a place to run (`PushGate`); its account's turn
/// (`AccountTurns`); then the push.
struct PushRoute: Sendable {
    static let path = "/v1/sync/push"

    let api: SyncAPI
    let budget: Budget
    let gate: PushGate
    /// Pushes of one account take turns (`AccountTurns`).
    let turns: AccountTurns
    /// How the errors of the push become problems, as for every other operation.
    let problems: ProblemMiddleware

    func respond(to request: Request, context: SyncRequestContext) async throws -> Response {
        do {
            let (device, account) = try api.requireDevice()
            try Self.requireJSON(request.headers[.contentType])
            let body = try await request.body.collect(upTo: Limits.maxPushBytes + 1)
            let events = try body.withUnsafeReadableBytes { try PushJSON.events(in: $0) }
            if let wait = budget.charge(account, events.count) {
                ServerMetrics.pushesOverBudget.increment()
                budget.tell(device, toWait: .seconds(wait))
                throw APIProblem.overBudget(retryAfter: wait, budget)
            }
            let accepted = try await gate.run(timerLoop: context.channel.eventLoop) {
                try await turns.run(account) { try await api.push(events, account: account, device: device) }
            }
            return Response(
                status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: #"{"lastAcceptedSeq":\#(accepted.lastAcceptedSeq),"version":\#(accepted.version)}"#)))
        } catch {
            throw problems.problem(for: error, operationID: "push")
        }
    }

    /// As the generated server decides: no content type, a wildcard, or `application/json` with
    /// any parameters is JSON (a value that does not parse as a media type counts as none);
    /// any other type is 415.
    static func requireJSON(_ contentType: String?) throws {
        guard let contentType, contentType != "application/json", !contentType.hasPrefix("application/json;") else { return }
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        let parts = mediaType.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return }
        if parts[1] == "*" || mediaType == "application/json" { return }
        throw APIProblem(status: 415, title: "Unsupported Media Type",
                         detail: "a push is application/json, not \(contentType)")
    }
}

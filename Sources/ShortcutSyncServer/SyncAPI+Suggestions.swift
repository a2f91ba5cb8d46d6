import CoreMetrics
import Foundation
import ShortcutSyncAPI
import ShortcutSyncDomain
import ShortcutSyncStore

extension SyncAPI {
    /// How many suggestions an answer holds when the device does not say, and at most.
    static let defaultSuggestions = 4
    static let maximumSuggestions = 20

    /// The shortcuts of the device's view to offer at `at` (DESIGN §3, §5): its account's sums
    /// ranked by the domain's `SuggestionScorer`. Every number is checked before use.
    func suggestions(_ input: Operations.Suggestions.Input) async throws -> Operations.Suggestions.Output {
        let (device, account) = try requireDeviceRead()
        var invalid: [FieldError] = []
        let limit = input.query.limit.map(Int.init) ?? Self.defaultSuggestions
        if !(1...Self.maximumSuggestions).contains(limit) {
            invalid.append(FieldError(pointer: "/limit", detail: "must be 1 to \(Self.maximumSuggestions)"))
        }
        if let at = input.query.at, !Limits.hlcWallRange.contains(at) {
            invalid.append(FieldError(pointer: "/at", detail: "must be 0 to \(Limits.hlcWallRange.upperBound) milliseconds since 1970"))
        }
        if let offset = input.query.utcOffsetMinutes, !Limits.utcOffsetMinutes.contains(Int(offset)) {
            invalid.append(FieldError(pointer: "/utcOffsetMinutes", detail: "must be −720 to 840 minutes"))
        }
        guard invalid.isEmpty else { throw APIProblem.invalid(invalid) }
        let at = input.query.at ?? now()
        let inputs = try await projections.suggestionInputs(account: account, device: device,
                                                            latestOffset: input.query.utcOffsetMinutes == nil)
        let moment = SuggestionMoment(
            deviceId: device, atMillis: at,
            utcOffsetMinutes: input.query.utcOffsetMinutes.map(Int.init) ?? inputs.latestUTCOffsetMinutes ?? 0,
            deviceLabel: SuggestionMoment.label(platform: inputs.platform ?? ""))
        let ranked = SuggestionScorer().rank(inputs.candidates, at: moment, limit: limit)
        let titles = try await projections.suggestionTitles(account: account, shortcuts: ranked.map(\.shortcut))
        ServerMetrics.suggestions.increment()
        return .ok(.init(body: .json(.init(version: inputs.version, at: at, suggestions: ranked.map { suggestion in
            .init(bundleId: suggestion.shortcut.bundleId, identifier: suggestion.shortcut.identifier,
                  title: titles[suggestion.shortcut] ?? suggestion.shortcut.identifier,
                  score: suggestion.score, reason: suggestion.reason)
        }))))
    }
}

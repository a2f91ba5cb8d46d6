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
        let places = input.query.place ?? []
        invalid += PlaceToken.violations(of: places)
        guard invalid.isEmpty else { throw APIProblem.invalid(invalid) }
        let at = input.query.at ?? now()
        let inputs = try await projections.suggestionInputs(account: account, device: device,
                                                            latestOffset: input.query.utcOffsetMinutes == nil)
        let moment = SuggestionMoment(
            deviceId: device, atMillis: at,
            utcOffsetMinutes: input.query.utcOffsetMinutes.map(Int.init) ?? inputs.latestUTCOffsetMinutes ?? 0,
            deviceLabel: SuggestionMoment.label(platform: inputs.platform ?? ""), places: places)
        let ranked = SuggestionScorer().rank(inputs.candidates, at: moment, limit: limit)
        let titles = try await projections.suggestionTitles(account: account, shortcuts: ranked.map(\.shortcut))
        ServerMetrics.suggestions.increment()
        if inputs.fromKeptSums { ServerMetrics.suggestionsOverKeptSums.increment() }
        return .ok(.init(body: .json(.init(version: inputs.version, at: at, suggestions: ranked.map { suggestion in
            .init(bundleId: suggestion.shortcut.bundleId, identifier: suggestion.shortcut.identifier,
                  title: titles[suggestion.shortcut] ?? suggestion.shortcut.identifier,
                  score: suggestion.score, reason: suggestion.reason)
        }))))
    }

    /// What the account learned of one shortcut of the device's view (issue 34), per device and
    /// together, decayed to now: read from the same sums the suggestions are ranked by.
    func suggestionHabits(_ input: Operations.SuggestionHabits.Input) async throws -> Operations.SuggestionHabits.Output {
        let (device, account) = try requireDeviceRead()
        let shortcut = ShortcutID(bundleId: input.query.bundleId, identifier: input.query.identifier)
        // As a donation's key would be checked: no stored shortcut has another.
        let invalid = EventValidator.violations(bundleId: shortcut.bundleId, identifier: shortcut.identifier)
        guard invalid.isEmpty else { throw APIProblem.invalid(invalid) }
        guard let habits = try await projections.habits(account: account, device: device, shortcut: shortcut) else {
            throw APIProblem.notFound("this device's view has no shortcut \(shortcut.identifier) of \(shortcut.bundleId)")
        }
        let learned = LearnedHabits(habits, atMillis: now())
        // A device's sums go when it is signed out: every device named is still the account's.
        let known = learned.devices.isEmpty ? [] : try await deviceSync.devices(account: account).devices
        let names = Dictionary(known.map { ($0.deviceId, $0) }) { first, _ in first }
        func hours(_ hours: [LearnedHabits.Hour]) -> [Components.Schemas.LearnedHour] {
            hours.map { .init(hourOfWeek: Int32($0.hourOfWeek), weight: $0.weight) }
        }
        return .ok(.init(body: .json(.init(
            bundleId: shortcut.bundleId, identifier: shortcut.identifier, at: learned.atMillis, hours: hours(learned.hours), week: learned.week,
            devices: learned.devices.map { device in
                .init(deviceId: device.deviceId.uuidString.lowercased(), name: names[device.deviceId]?.name ?? "",
                      platform: names[device.deviceId]?.platform ?? "", donations: Int64(device.donations), weight: device.weight,
                      hours: hours(device.hours))
            },
            places: learned.places.map { .init(prefix: $0.prefix, weight: $0.weight) }))))
    }
}

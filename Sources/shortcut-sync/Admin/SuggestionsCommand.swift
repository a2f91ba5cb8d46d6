import ArgumentParser
import Foundation
import ShortcutSyncAdmin
import ShortcutSyncDomain
import ShortcutSyncStore

/// `admin suggestions --device D [--at TIME] [--limit K]`: what the service offers the device
/// then, with each score's parts (DESIGN §7); with `--explain BUNDLE/IDENTIFIER`, what it has
/// learned of that shortcut, as a week grid.
struct SuggestionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "suggestions",
        abstract: "What the service suggests on a device at a time, with each score's parts.",
        discussion: "TIME is ISO 8601 (without an offset, local time); default now. The device's local hour is taken at its latest donation's offset from UTC unless --utc-offset-minutes says otherwise. With --explain, the weights are decayed to TIME.")

    @OptionGroup var options: AdminOptions
    @Option(help: "The device's id.") var device: IdentifierArgument
    @Option(help: "The moment (ISO 8601); default now.") var at: String?
    @Option(help: "How many suggestions (1 to 20).") var limit: Int = 4
    @Option(name: .customLong("utc-offset-minutes"), help: "The device's offset from UTC then (−720 to 840).") var utcOffsetMinutes: Int?
    @Option(name: .customLong("place"), help: ArgumentHelp("A place token where the device is (32 hex digits; repeat it: its own cell first, then the cells around).",
                                                         valueName: "token")) var places: [String] = []
    @Option(help: ArgumentHelp("What was learned of one shortcut of the device's view: each hour of the week, each device's share.",
                               valueName: "bundle-id/identifier")) var explain: String?

    /// `--explain`'s shortcut: the bundle id is all before the first slash (it has none), the identifier all after.
    var explained: ShortcutID? {
        guard let explain, let slash = explain.firstIndex(of: "/") else { return nil }
        let shortcut = ShortcutID(bundleId: String(explain[..<slash]), identifier: String(explain[explain.index(after: slash)...]))
        guard EventValidator.violations(bundleId: shortcut.bundleId, identifier: shortcut.identifier).isEmpty else { return nil }
        return shortcut
    }

    func validate() throws {
        if let at, ISO8601.parse(at) == nil { throw ValidationError("--at must be an ISO 8601 time, e.g. 2026-11-20T18:30:00Z") }
        if !(1...20).contains(limit) { throw ValidationError("--limit must be 1 to 20") }
        if let utcOffsetMinutes, !Limits.utcOffsetMinutes.contains(utcOffsetMinutes) {
            throw ValidationError("--utc-offset-minutes must be −720 to 840")
        }
        if let problem = PlaceToken.violations(of: places, at: "--place").first {
            throw ValidationError("\(problem.pointer) \(problem.detail)")
        }
        if explain != nil, explained == nil {
            throw ValidationError("--explain must be BUNDLE-ID/IDENTIFIER, such as com.example.soup/tomato")
        }
    }

    func run() async throws {
        let moment = at.flatMap(ISO8601.parse) ?? Date()
        try await options.withOperator {
            if let explained {
                try options.print(try await $0.habits(device: device.uuid, shortcut: explained, at: moment))
            } else {
                try options.print(try await $0.suggestions(device: device.uuid, at: moment, utcOffsetMinutes: utcOffsetMinutes, places: places, limit: limit))
            }
        }
    }
}

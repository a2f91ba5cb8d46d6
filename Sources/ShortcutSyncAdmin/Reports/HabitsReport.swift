import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

/// `admin suggestions --device D --explain BUNDLE/IDENTIFIER`: what the service has learned of
/// one shortcut of the device's view, as `GET /v1/suggestions/habits` answers: a week grid of the
/// person's hours and each device's share.
public struct HabitsReport: AdminReport {
    /// A device that taught it, by name.
    public struct Device: Sendable, Codable {
        public var deviceId: UUID
        public var name: String
        public var platform: String
        public var donations: Int
        public var weight: Double
        public var hours: [LearnedHabits.Hour]
    }

    public var accountId: UUID
    public var deviceId: UUID
    public var bundleId: String
    public var identifier: String
    public var at: Date
    public var hours: [LearnedHabits.Hour]
    /// Seven rows, Monday first, of 24 shares of the heaviest hour (0…1).
    public var week: [[Double]]
    public var devices: [Device]
    /// The places it was used at, every device together, the heaviest first: each as the first
    /// two hex digits of its tokens (`PlaceToken`), all the service keeps of a place.
    public var places: [LearnedHabits.Place]
    /// Whether the account's learning is paused now, and the signed-in devices whose learning is.
    public var learningPaused: Bool
    public var devicesPaused: [UUID]

    /// The shades of an hour's share of the heaviest hour: none, then up to a quarter, a half,
    /// three quarters, all.
    static let shades: [Character] = ["·", "░", "▒", "▓", "█"]

    static func shade(_ share: Double) -> Character {
        guard share > 0 else { return shades[0] }
        return shades[min(4, Int((share * 4).rounded(.up)))]
    }

    public var text: String {
        var lines = ["\(bundleId)/\(identifier) in the view of device \(deviceId.lowercased) of account \(accountId.lowercased), at \(ISO8601.format(at))"]
        lines.append(learningPaused ? "learning: paused for the whole account"
                     : devicesPaused.isEmpty ? "learning: on"
                     : "learning: on, paused on " + devicesPaused.map(\.lowercased).joined(separator: ", "))
        lines.append("")
        guard !devices.isEmpty else {
            return (lines + ["(nothing learned of it yet: no donation eligible for prediction)"]).joined(separator: "\n") + "\n"
        }
        // Two columns an hour; the hours every three.
        lines.append("     " + stride(from: 0, to: 24, by: 3).map { String(format: "%-6d", $0) }.joined())
        for (day, row) in week.enumerated() {
            lines.append(String(SuggestionReason.days[day].prefix(3)) + "  " + row.map { String(repeating: Self.shade($0), count: 2) }.joined())
        }
        lines.append("")
        lines.append("local time; \(Self.shades.map(String.init).joined(separator: " ")): none, then up to ¼, ½, ¾ and all of the heaviest hour")
        lines.append("")
        var table = TextTable([.init("DEVICE", maxWidth: 36), .init("NAME", maxWidth: 24), .init("PLATFORM"), .init("DONATIONS", alignRight: true),
                               .init("WEIGHT", alignRight: true), .init("HEAVIEST HOURS", maxWidth: 60)])
        for device in devices {
            let heaviest = device.hours.sorted { ($0.weight, $1.hourOfWeek) > ($1.weight, $0.hourOfWeek) }.prefix(3).map {
                "\(SuggestionReason.days[$0.hourOfWeek / 24].prefix(3)) \($0.hourOfWeek % 24):00 (\(String(format: "%.2f", $0.weight)))"
            }
            table.append([device.deviceId.lowercased, device.name, device.platform, "\(device.donations)", String(format: "%.3f", device.weight),
                          heaviest.joined(separator: ", ")])
        }
        lines.append(table.rendered)
        lines.append(places.isEmpty ? "places: none (no donation of it carried a place)"
                     : "places (token prefix, weight): " + places.prefix(12).map { "\($0.prefix) (\(String(format: "%.2f", $0.weight)))" }
                        .joined(separator: ", ") + (places.count > 12 ? ", and \(places.count - 12) more" : ""))
        lines.append("Weights are decayed donations: each halved every 3 weeks.")
        return lines.joined(separator: "\n") + "\n"
    }
}

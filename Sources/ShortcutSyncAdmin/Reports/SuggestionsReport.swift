import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

/// `admin suggestions --device D`: what the service offers the device at a moment, each score
/// with its parts (DESIGN §7), from the live projections, as `GET /v1/suggestions` answers.
public struct SuggestionsReport: AdminReport {
    public struct Row: Sendable, Codable {
        public var bundleId: String
        public var identifier: String
        public var title: String
        public var score: Double
        public var parts: SuggestionParts
        public var reason: String
    }

    public var accountId: UUID
    public var deviceId: UUID
    public var at: Date
    public var utcOffsetMinutes: Int
    /// The hour of the device's local week asked about (0 = Monday 00:00).
    public var hourOfWeek: Int
    public var version: Int64
    public var suggestions: [Row]

    public var text: String {
        let heading = "device \(deviceId.lowercased) of account \(accountId.lowercased), at \(ISO8601.format(at)) "
            + String(format: "(UTC%+03d:%02d, ", utcOffsetMinutes / 60, abs(utcOffsetMinutes % 60))
            + "\(SuggestionReason.days[hourOfWeek / 24]) \(hourOfWeek % 24):00–\(hourOfWeek % 24):59 local), account version \(version)"
        var table = TextTable([.init("SHORTCUT", maxWidth: 40), .init("TITLE", maxWidth: 24), .init("SCORE", alignRight: true),
                               .init("THIS HOUR", alignRight: true), .init("SAME HOUR, OTHER DAYS", alignRight: true),
                               .init("OVERALL", alignRight: true), .init("ACCOUNT PATTERN", alignRight: true), .init("PLACE ×", alignRight: true),
                               .init("REASON", maxWidth: 50)])
        func number(_ value: Double) -> String { String(format: "%.3f", value) }
        for row in suggestions {
            table.append(["\(row.bundleId)/\(row.identifier)", row.title, number(row.score), number(row.parts.thisHour),
                          number(row.parts.sameHourOtherDays), number(row.parts.overall), number(row.parts.otherDevices),
                          row.parts.place.map(number) ?? "–", row.reason])
        }
        let note = "Parts are decayed donations (each halved every 3 weeks): this device's at this hour and the hours next to it, "
            + "at the same hour on the other days of the same kind, overall; and the account's pattern at this hour as a share, worth 10 donations. "
            + "PLACE × multiplies their sum by the share of the shortcut's placed use that was here (– : by time alone)."
        return heading + "\n\n" + (suggestions.isEmpty ? "(nothing learned for this device's view yet)\n" : table.rendered) + "\n" + note
    }
}

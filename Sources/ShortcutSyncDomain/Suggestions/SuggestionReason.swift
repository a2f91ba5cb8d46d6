import Foundation

/// Why a shortcut is suggested, in a few words, from the largest part of its score:
/// "often on Friday evenings on this iPhone", "on weekday mornings on your other devices".
public enum SuggestionReason {
    public static let days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

    /// `patternIsThisDevices`: the account's pattern for the shortcut is mostly this device's
    /// own donations, so the pattern part speaks of this device too. `mostlyHere`: most of the
    /// shortcut's placed use was where the device is now ("often here on Friday evenings…").
    public static func text(for parts: SuggestionParts, hourOfWeek hour: Int, deviceLabel: String, patternIsThisDevices: Bool = false,
                            mostlyHere: Bool = false) -> String {
        let here = mostlyHere ? " here" : ""
        let own = parts.thisHour + parts.sameHourOtherDays + (patternIsThisDevices ? parts.otherDevices : 0)
        if parts.overall > own && parts.overall > parts.otherDevices {
            return "often used\(here) lately on this \(deviceLabel)"
        }
        let day = min(max(hour / 24, 0), 6)
        let time = partOfDay(hour % 24)
        if !patternIsThisDevices && parts.otherDevices > own {
            return "often\(here) at this time on your other devices"
        }
        let when = parts.sameHourOtherDays > parts.thisHour && parts.sameHourOtherDays > 0
            ? (day >= 5 ? "on weekend \(time)s" : "on weekday \(time)s")
            : "on \(days[day]) \(time)s"
        return "often\(here) \(when) on this \(deviceLabel)"
    }

    static func partOfDay(_ hour: Int) -> String {
        switch hour {
        case 5..<12: "morning"
        case 12..<17: "afternoon"
        case 17..<22: "evening"
        default: "night"
        }
    }
}

import Foundation

/// How times are shown to people: local time, to the second.
public enum LocalTime {
    public static func format(_ date: Date?) -> String {
        guard let date else { return "-" }
        return formatter.string(from: date)
    }

    private static let formatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = .current
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter
    }()
}

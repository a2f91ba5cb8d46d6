import Foundation

/// How admin writes and reads times: ISO 8601 in UTC with microseconds, PostgreSQL's precision,
/// so an export and import keep every recorded time exactly and any time printed (`--json`, an
/// export's `recordedAt`) can be given back to `--as-of`. Reading takes any fraction and any
/// offset; a time without an offset is local.
public enum ISO8601 {
    public static func format(_ date: Date) -> String {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        let seconds = (micros / 1_000_000).rounded(.down)
        let fraction = Int(micros - seconds * 1_000_000)
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec, fraction)
    }

    public static func parse(_ text: String) -> Date? {
        // The fraction is read here, the rest as a time to the second.
        guard let dot = text.firstIndex(of: ".") else { return parseWholeSeconds(text) }
        let digits = text[text.index(after: dot)...].prefix { $0.isNumber }
        guard !digits.isEmpty, let whole = parseWholeSeconds(String(text[..<dot]) + text[digits.endIndex...]) else { return nil }
        let fraction = Double("0." + digits)!
        // Whole microseconds, as PostgreSQL keeps them.
        return Date(timeIntervalSince1970: ((whole.timeIntervalSince1970 + fraction) * 1_000_000).rounded() / 1_000_000)
    }

    private static func parseWholeSeconds(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        if let date = formatter.date(from: text) { return date }
        let local = DateFormatter()
        local.locale = Locale(identifier: "en_US_POSIX")
        local.timeZone = .current
        for format in ["yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd"] {
            local.dateFormat = format
            if let date = local.date(from: text) { return date }
        }
        return nil
    }
}

import Foundation

/// JSON for scripts: sorted keys, ISO 8601 times, one document per output (or per line with `--follow`).
public enum ScriptJSON {
    public static func encode(_ value: some Encodable, pretty: Bool = true) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(ISO8601.format(date))
        }
        return String(decoding: try encoder.encode(value), as: UTF8.self) + "\n"
    }
}

import Foundation

/// How a benchmark's results leave the run: a table for people, and JSON for scripts.
public enum BenchOutput {
    /// Prints `table` after a blank line, and writes `results` as JSON to `json` when given.
    public static func print(_ table: String, _ results: some Encodable, json: String?) throws {
        Swift.print()
        Swift.print(table)
        guard let json else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(results).write(to: URL(fileURLWithPath: json))
        Swift.print("wrote \(json)")
    }
}

import Foundation
import Logging
import PostgresNIO
import ShortcutSyncStore

/// What a benchmark ran on, for its table: figures mean little without it.
public struct BenchMachine: Sendable, Hashable, Codable, CustomStringConvertible {
    public var processor: String
    public var cores: Int
    public var memoryBytes: UInt64
    public var system: String
    public var postgreSQL: String

    /// This machine, and the version of the PostgreSQL server at `database`.
    public static func describe(database: DatabaseURL, logger: Logger) async throws -> BenchMachine {
        let client = PostgresClient(configuration: try database.clientConfiguration(maximumConnections: 1), backgroundLogger: logger)
        let version = try await client.withRunning {
            try await client.query("SHOW server_version", logger: logger).decode(String.self).collectAll().first ?? "?"
        }
        return BenchMachine(
            processor: field("model name", in: "/proc/cpuinfo", separator: ":") ?? "unknown processor",
            cores: ProcessInfo.processInfo.activeProcessorCount,
            memoryBytes: ProcessInfo.processInfo.physicalMemory,
            system: field("PRETTY_NAME", in: "/etc/os-release", separator: "=")?.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) ?? "unknown system",
            postgreSQL: version)
    }

    public var description: String {
        "\(processor), \(cores) cores, \(memoryBytes >> 30) GiB; \(system); PostgreSQL \(postgreSQL)"
    }

    /// The value of the first line of `file` that starts with `name` (Linux's /proc and /etc files).
    private static func field(_ name: String, in file: String, separator: Character) -> String? {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            guard let value = line.split(separator: separator, maxSplits: 1).last else { continue }
            return value.trimmingCharacters(in: .whitespaces)
        }
        return nil
    }
}

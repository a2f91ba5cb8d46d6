import Foundation
import Logging
import PostgresNIO

/// One numbered SQL file of `Schema/`.
public struct Migration: Sendable, Hashable {
    public var version: Int
    public var name: String
    public var sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// The migrations shipped with this build, in order.
    public static func bundled() throws -> [Migration] {
        guard let directory = Bundle.module.url(forResource: "Schema", withExtension: nil) else {
            throw StoreError.migrationsMissing("the Schema resource is not in the bundle")
        }
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "sql" }
        return try files.map { url in
            let name = url.deletingPathExtension().lastPathComponent
            guard let version = Int(name.prefix { $0.isNumber }) else {
                throw StoreError.migrationsMissing("\(url.lastPathComponent) does not start with its number")
            }
            return Migration(version: version, name: name, sql: try String(contentsOf: url, encoding: .utf8))
        }
        .sorted { $0.version < $1.version }
    }

    /// `Schema/citus/distribute.sql`: what the migrator runs after the migrations on a Citus coordinator.
    static func citusDistribution() throws -> String {
        guard let directory = Bundle.module.url(forResource: "Schema", withExtension: nil) else {
            throw StoreError.migrationsMissing("the Schema resource is not in the bundle")
        }
        return try String(contentsOf: directory.appendingPathComponent("citus/distribute.sql"), encoding: .utf8)
    }
}

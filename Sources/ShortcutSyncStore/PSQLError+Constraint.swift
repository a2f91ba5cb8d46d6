import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

extension PSQLError {
    var isUniqueViolation: Bool { serverInfo?[.sqlState] == "23505" }
    var constraintName: String? { serverInfo?[.constraintName] }

    /// Whether the error names `constraint`, as one PostgreSQL names it or as a Citus worker does:
    /// there the violated constraint is the shard's copy, the base name with `_<shard id>` appended
    /// (`events_event_id_key_102008`).
    func names(constraint: String) -> Bool {
        guard let name = constraintName else { return false }
        return Self.constraint(name, isCopyOf: constraint)
    }

    static func constraint(_ name: String, isCopyOf constraint: String) -> Bool {
        guard name.hasPrefix(constraint) else { return false }
        let rest = name.dropFirst(constraint.count)
        guard !rest.isEmpty else { return true }
        return rest.first == "_" && rest.count > 1 && rest.dropFirst().allSatisfy(\.isASCIIDigit)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

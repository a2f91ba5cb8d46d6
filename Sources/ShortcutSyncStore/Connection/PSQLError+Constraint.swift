import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

extension PSQLError {
    var isUniqueViolation: Bool { serverInfo?[.sqlState] == "23505" }
    var constraintName: String? { serverInfo?[.constraintName] }

    /// Whether the error names `constraint`, as one PostgreSQL names it or as a Citus worker does:
    /// there the violated constraint is the shard's copy, the base name with `_<shard id>` appended
    /// (`events_event_id_key_102008`). The coordinator passes a worker's message on but not its
    /// constraint field, so the name is also looked for in the message, between double quotes
    /// (`… violates unique constraint "events_event_id_key_102008"`, in any language).
    func names(constraint: String) -> Bool {
        if let name = constraintName { return Self.constraint(name, isCopyOf: constraint) }
        let quoted = (serverInfo?[.message] ?? "").split(separator: "\"", omittingEmptySubsequences: false)
        // The quoted parts are the odd ones.
        return stride(from: 1, to: quoted.count, by: 2).contains { Self.constraint(String(quoted[$0]), isCopyOf: constraint) }
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

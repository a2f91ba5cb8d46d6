import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

public struct VerifyReport: AdminReport {
    public struct Difference: Encodable, Sendable, Hashable {
        public var kind: String
        public var accountId: UUID
        public var key: String
        public var live: String?
        public var rebuilt: String?
    }

    /// Accounts whose live rows were compared with a replay of their log.
    public var accountsCompared: Int64
    /// Accounts whose live rows are behind their head (an import not folded yet, or parked), or wait
    /// for the refold an upgrade asked for: not compared.
    public var accountsBehind: Int64
    public var consistent: Bool
    public var differences: [Difference]

    init(_ verification: ProjectionVerification) {
        accountsCompared = verification.accountsCompared
        accountsBehind = verification.accountsBehind
        consistent = verification.isConsistent
        differences = verification.differences.map {
            Difference(kind: $0.kind.rawValue, accountId: $0.accountId, key: $0.key, live: $0.live, rebuilt: $0.rebuilt)
        }
    }

    public var text: String {
        let behind = accountsBehind == 0 ? "" :
            " (\(plural(Int(accountsBehind), "account")) behind \(accountsBehind == 1 ? "its" : "their") head or waiting for a refold, not compared: see `admin projections status`)"
        guard !consistent else {
            return "The live projections of \(plural(Int(accountsCompared), "account")) equal a replay of their log\(behind).\n"
        }
        var text = "\(differences.count) difference\(differences.count == 1 ? "" : "s") between the live projections of \(plural(Int(accountsCompared), "account")) and a replay of their log\(behind):\n"
        // Each value escaped where it is put in its line: the whole report keeps its own line
        // breaks when it is printed, and a key's (an app's identifier may hold one) would forge a line.
        func shown(_ value: String) -> String { ControlCharacters.escaped(value) }
        for difference in differences {
            text += "  \(difference.kind) \(difference.accountId.lowercased) \(shown(difference.key))\n"
            text += "    live:    \(shown(difference.live ?? "absent"))\n"
            text += "    rebuilt: \(shown(difference.rebuilt ?? "absent"))\n"
        }
        return text
    }
}

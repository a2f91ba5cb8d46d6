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

    public var checkpointTransactionId: UInt64
    public var checkpointPosition: Int64
    public var consistent: Bool
    public var differences: [Difference]

    init(_ verification: ProjectionVerification) {
        checkpointTransactionId = verification.checkpoint.transactionID
        checkpointPosition = verification.checkpoint.position
        consistent = verification.isConsistent
        differences = verification.differences.map {
            Difference(kind: $0.kind.rawValue, accountId: $0.accountId, key: $0.key, live: $0.live, rebuilt: $0.rebuilt)
        }
    }

    public var text: String {
        guard !consistent else {
            return "The live projections equal a replay of the log at position \(checkpointPosition).\n"
        }
        var text = "\(differences.count) difference\(differences.count == 1 ? "" : "s") between the live projections and a replay of the log at position \(checkpointPosition):\n"
        for difference in differences {
            text += "  \(difference.kind) \(difference.accountId.lowercased) \(difference.key)\n"
            text += "    live:    \(difference.live ?? "absent")\n"
            text += "    rebuilt: \(difference.rebuilt ?? "absent")\n"
        }
        return text
    }
}

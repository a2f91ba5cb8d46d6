import Foundation
import ShortcutSyncDomain

/// What a server announces with `NOTIFY` after pushes (and the maintenance tasks after folding):
/// these accounts' views changed, up to these versions. Every server instance `LISTEN`s and pokes
/// the streams and waiting pulls of each account; a poke is only a hint, pulls are the truth.
///
/// Announcements are coalesced (DESIGN §6): a server gathers the accounts its pushes changed for
/// a few milliseconds and sends them in one notification, never one per push, since each `NOTIFY`
/// serialises committing transactions. The payload is text, `sender;account:version,…`, kept
/// below `maximumPayloadBytes` (PostgreSQL refuses 8000 bytes); `sender` lets a server skip its
/// own announcements, whose streams it poked at once. The earliest commit of a server's batch
/// (`committedAt`, epoch milliseconds, for the freshness the other servers measure) rides as the
/// version of the nil account, which no account has: a server that does not know it pokes
/// nobody with it. When the process traces, an account's entry may carry the `traceparent` of
/// the push that changed it (`account:version:traceparent`), so that the other servers' pokes
/// join that push's trace; without tracing the payload is as before.
public struct ProjectionNotification: Sendable, Hashable {
    /// The channel every server notifies on and listens to.
    public static let channel = "shortcut_sync_projection"
    /// The longest payload sent: PostgreSQL's limit is 8000 bytes.
    public static let maximumPayloadBytes = 7_900

    /// The process that sent it; nil for the maintenance tasks.
    public var sender: UUID?
    /// Each account's version after the changes announced.
    public var versions: [UUID: Int64]
    /// When the earliest of the changes announced was committed (epoch milliseconds, the
    /// sender's clock); nil when the sender did not say (the maintenance tasks).
    public var committedAt: Int64?
    /// The trace of the change of each account that has one (`TraceParent`).
    public var traces: [UUID: String]

    /// The account that carries `committedAt` in a payload.
    static let commitTimeCarrier = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    public init(sender: UUID?, versions: [UUID: Int64], committedAt: Int64? = nil, traces: [UUID: String] = [:]) {
        self.sender = sender
        self.versions = versions
        self.committedAt = committedAt
        self.traces = traces
    }

    /// The notification of `payload`; nil when it is not one.
    public init?(payload: String) {
        let parts = payload.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        if parts[0].isEmpty {
            sender = nil
        } else {
            guard let sender = UUID(canonical: parts[0]) else { return nil }
            self.sender = sender
        }
        var versions: [UUID: Int64] = [:]
        var traces: [UUID: String] = [:]
        for entry in parts[1].split(separator: ",") {
            let fields = entry.split(separator: ":")
            guard fields.count == 2 || fields.count == 3, let account = UUID(canonical: fields[0]),
                  let version = Int64(fields[1]) else { return nil }
            if account == Self.commitTimeCarrier {
                committedAt = version
            } else {
                versions[account] = max(versions[account] ?? 0, version)
            }
            // A trace that is not of the header's shape is dropped, never the poke.
            if fields.count == 3, TraceParentShape.isWellFormed(fields[2]) { traces[account] = String(fields[2]) }
        }
        self.versions = versions
        self.traces = traces
    }

    /// The payloads that announce `versions` from `sender`, each below `maximumPayloadBytes`, each
    /// with `committedAt` when there is one, and each account's trace when it has one.
    public static func payloads(sender: UUID?, versions: [UUID: Int64], committedAt: Int64? = nil, traces: [UUID: String] = [:]) -> [String] {
        let head = (sender?.uuidString.lowercased() ?? "") + ";"
            + (committedAt.map { "\(commitTimeCarrier.uuidString.lowercased()):\($0)," } ?? "")
        var payloads: [String] = []
        var current = head
        for (account, version) in versions.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
            let trace = traces[account].map { TraceParentShape.isWellFormed($0) ? ":\($0)" : "" } ?? ""
            let entry = "\(account.uuidString.lowercased()):\(version)\(trace)"
            if current.utf8.count + entry.utf8.count + 1 > maximumPayloadBytes, current != head {
                payloads.append(current)
                current = head
            }
            current += (current == head ? "" : ",") + entry
        }
        if current != head { payloads.append(current) }
        return payloads
    }
}

import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

public struct StatusReport: AdminReport {
    public struct Holder: Encodable, Sendable, Hashable {
        public var pid: Int32
        public var applicationName: String
        public var state: String
        public var ageSeconds: Double
    }

    public var checkpointTransactionId: UInt64
    public var checkpointPosition: Int64
    public var epoch: Int64
    public var headPosition: Int64
    public var pendingEvents: Int64
    public var lagSeconds: Double
    public var parkedAccounts: Int64
    public var eventsBehindHorizon: Int64
    public var horizonHolder: Holder?

    init(_ report: ProjectionStatusReport) {
        checkpointTransactionId = report.checkpoint.log.transactionID
        checkpointPosition = report.checkpoint.log.position
        epoch = report.checkpoint.epoch
        headPosition = report.headPosition
        pendingEvents = report.pendingEvents
        lagSeconds = report.lagSeconds
        parkedAccounts = report.parkedAccounts
        eventsBehindHorizon = report.eventsBehindHorizon
        horizonHolder = report.horizonHolder.map {
            Holder(pid: $0.pid, applicationName: $0.applicationName, state: $0.state, ageSeconds: $0.ageSeconds)
        }
    }

    public var text: String {
        var lines = [
            "checkpoint       position \(checkpointPosition) (transaction \(checkpointTransactionId)), epoch \(epoch)",
            "head             position \(headPosition)",
            "lag              \(plural(Int(pendingEvents), "event")), \(String(format: "%.1f", lagSeconds)) s",
            "parked accounts  \(parkedAccounts)",
        ]
        if eventsBehindHorizon > 0 {
            var line = "horizon          held back: \(plural(Int(eventsBehindHorizon), "committed event")) \(eventsBehindHorizon == 1 ? "waits" : "wait") for an older open transaction"
            if let holder = horizonHolder {
                line += "\n                 pid \(holder.pid), application \"\(holder.applicationName)\", open \(String(format: "%.1f", holder.ageSeconds)) s, \(holder.state)"
            }
            lines.append(line)
        } else {
            lines.append("horizon          not held back")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

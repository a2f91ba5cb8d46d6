import Foundation
import Logging
import ShortcutSyncStore

/// PostgreSQL's cost per event of the pushes beside the raw inserts', in microseconds (nil where
/// unknown), with the pushes' whole measurement.
public struct DatabaseCostPerEvent: Sendable, Hashable, Codable {
    public var executionMicroseconds: Double?
    public var planningMicroseconds: Double?
    public var cpuMicroseconds: Double?
    public var rawExecutionMicroseconds: Double?
    public var rawCPUMicroseconds: Double?
    public var pushes: DatabaseCost

    init(ours: DatabaseCost, events: Int, raw: DatabaseCost, rawRows: Int) {
        func per(_ milliseconds: Double?, _ count: Int) -> Double? {
            guard let milliseconds, count > 0 else { return nil }
            return milliseconds * 1000 / Double(count)
        }
        executionMicroseconds = per(ours.executionMilliseconds, events)
        planningMicroseconds = per(ours.planningMilliseconds, events)
        cpuMicroseconds = per(ours.cpuMilliseconds, events)
        rawExecutionMicroseconds = per(raw.executionMilliseconds.map { $0 + (raw.planningMilliseconds ?? 0) }, rawRows)
        rawCPUMicroseconds = per(raw.cpuMilliseconds, rawRows)
        pushes = ours
    }

    /// Statement time (execution and planning) per event, ours beside raw, and CPU per event.
    var summary: String {
        func micros(_ value: Double?) -> String { value.map { String(format: "%.0f µs", $0) } ?? "?" }
        let ours = executionMicroseconds.map { $0 + (planningMicroseconds ?? 0) }
        let ratio = ours.flatMap { ours in rawExecutionMicroseconds.flatMap { $0 > 0 ? String(format: " (%.1f×)", ours / $0) : nil } } ?? ""
        return "statements \(micros(ours)) (planning \(micros(planningMicroseconds))) vs raw \(micros(rawExecutionMicroseconds))\(ratio); "
            + "CPU \(micros(cpuMicroseconds)) vs raw \(micros(rawCPUMicroseconds))"
    }
}

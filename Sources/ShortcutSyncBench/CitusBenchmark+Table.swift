import Foundation

extension CitusBenchmark.Results {
    /// One PostgreSQL beside the cluster, a row a figure, with the ratio Citus / one: for
    /// throughput the share of one PostgreSQL's the cluster carries, for CPU and latency how many
    /// times one PostgreSQL's it costs.
    public var table: String {
        func count(_ value: Double) -> String { Int(value.rounded()).formatted(.number.grouping(.automatic)) }
        func micros(_ value: Double?) -> String { value.map { count($0) + " µs" } ?? "?" }
        func ratio(_ citus: Double?, _ one: Double?, times: Bool) -> String {
            guard let citus, let one, one > 0 else { return "—" }
            return String(format: times ? "%.1f×" : "%.2f", citus / one)
        }
        var lines = ["Machine: \(machine); Citus \(citusVersion)", "",
                     "| | one PostgreSQL | Citus, a coordinator and \(CitusBenchmark.workerCount) workers | Citus / one |",
                     "| --- | --- | --- | --- |"]
        for one in onePostgreSQL.throughput {
            guard let citus = citus.throughput.first(where: { $0.scenario.key == one.scenario.key }) else { continue }
            func rate(_ figure: PushBenchmark.Throughput) -> String {
                "\(count(figure.oursEventsPerSecond)) ev/s, p50 / p99 "
                    + String(format: "%.1f / %.1f ms", figure.pushP50Milliseconds, figure.pushP99Milliseconds)
                    + (figure.failedPushes > 0 ? " (\(figure.failedPushes) failed)" : "")
            }
            lines.append("| \(one.scenario.name) | \(rate(one)) | \(rate(citus)) | "
                + ratio(citus.oursEventsPerSecond, one.oursEventsPerSecond, times: false) + " |")
            let batch = Double(one.scenario.batch)
            let service = (one.serviceCPUMicrosecondsPerEvent.map { $0 * batch }, citus.serviceCPUMicrosecondsPerEvent.map { $0 * batch })
            lines.append("| service CPU per push | \(micros(service.0)) | \(micros(service.1)) | \(ratio(service.1, service.0, times: true)) |")
            let database = (Self.total(one.nodesCPU), Self.total(citus.nodesCPU))
            let perNode = (citus.nodesCPU ?? []).map { "\($0.name) \(micros($0.microsecondsPerPush))" }.joined(separator: ", ")
            lines.append("| PostgreSQL CPU per push, every node | \(micros(database.0)) | \(micros(database.1))"
                + (perNode.isEmpty ? "" : " (\(perNode))") + " | \(ratio(database.1, database.0, times: true)) |")
        }
        let (one, cluster) = (onePostgreSQL.latency, citus.latency)
        lines.append("| push → another device's pull through its stream, p50 / p99 (\(one.streams) streams, \(one.samples) samples) | "
            + String(format: "%.1f / %.1f ms | %.1f / %.1f ms | ", one.p50Milliseconds, one.p99Milliseconds, cluster.p50Milliseconds,
                     cluster.p99Milliseconds)
            + ratio(cluster.p50Milliseconds, one.p50Milliseconds, times: true) + " / " + ratio(cluster.p99Milliseconds, one.p99Milliseconds, times: true)
            + " |")
        return lines.joined(separator: "\n")
    }

    /// Every node's CPU per push together; nil where any node's is unknown, or none was read.
    static func total(_ nodes: [NodeCPU]?) -> Double? {
        guard let nodes, !nodes.isEmpty else { return nil }
        var sum = 0.0
        for node in nodes {
            guard let value = node.microsecondsPerPush else { return nil }
            sum += value
        }
        return sum
    }
}

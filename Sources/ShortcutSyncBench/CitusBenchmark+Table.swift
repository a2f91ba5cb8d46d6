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
        let clusters = [citus] + (attached.map { [$0] } ?? [])
        var lines = ["Machine: \(machine); Citus \(citusVersion)", "",
                     "| | one PostgreSQL | Citus, a coordinator and \(CitusBenchmark.workerCount) workers, the service on the coordinator | Citus / one |"
                        + (attached != nil ? " the service attached to \(attachedTo ?? "a worker"), routing by account | attached / one |" : ""),
                     "| --- | --- | --- | --- |" + (attached != nil ? " --- | --- |" : "")]
        for one in onePostgreSQL.throughput {
            let figures = clusters.compactMap { $0.throughput.first(where: { $0.scenario.key == one.scenario.key }) }
            guard figures.count == clusters.count else { continue }
            func rate(_ figure: PushBenchmark.Throughput) -> String {
                "\(count(figure.oursEventsPerSecond)) ev/s, p50 / p99 "
                    + String(format: "%.1f / %.1f ms", figure.pushP50Milliseconds, figure.pushP99Milliseconds)
                    + (figure.failedPushes > 0 ? " (\(figure.failedPushes) failed)" : "")
            }
            lines.append("| \(one.scenario.name) | \(rate(one)) | "
                + figures.map { "\(rate($0)) | " + ratio($0.oursEventsPerSecond, one.oursEventsPerSecond, times: false) + " |" }.joined(separator: " "))
            let batch = Double(one.scenario.batch)
            func service(_ figure: PushBenchmark.Throughput) -> Double? { figure.serviceCPUMicrosecondsPerEvent.map { $0 * batch } }
            lines.append("| service CPU per push | \(micros(service(one))) | "
                + figures.map { "\(micros(service($0))) | \(ratio(service($0), service(one), times: true)) |" }.joined(separator: " "))
            func database(_ figure: PushBenchmark.Throughput) -> String {
                let perNode = (figure.nodesCPU ?? []).map { "\($0.name) \(micros($0.microsecondsPerPush))" }.joined(separator: ", ")
                return micros(Self.total(figure.nodesCPU)) + (perNode.isEmpty ? "" : " (\(perNode))")
            }
            lines.append("| PostgreSQL CPU per push, every node | \(micros(Self.total(one.nodesCPU))) | "
                + figures.map { "\(database($0)) | \(ratio(Self.total($0.nodesCPU), Self.total(one.nodesCPU), times: true)) |" }.joined(separator: " "))
        }
        if let onePulls = onePostgreSQL.pulls {
            let figures = clusters.compactMap(\.pulls)
            if figures.count == clusters.count {
                func rate(_ figure: PushBenchmark.PullThroughput) -> String {
                    "\(count(figure.pullsPerSecond)) pulls/s, p50 / p99 " + String(format: "%.1f / %.1f ms", figure.p50Milliseconds, figure.p99Milliseconds)
                        + (figure.failedPulls > 0 ? " (\(figure.failedPulls) failed)" : "")
                }
                lines.append("| whole-view pulls, \(onePulls.devices) devices of as many accounts | \(rate(onePulls)) | "
                    + figures.map { "\(rate($0)) | " + ratio($0.pullsPerSecond, onePulls.pullsPerSecond, times: false) + " |" }.joined(separator: " "))
                lines.append("| service CPU per pull | \(micros(onePulls.serviceCPUMicrosecondsPerPull)) | "
                    + figures.map { "\(micros($0.serviceCPUMicrosecondsPerPull)) | \(ratio($0.serviceCPUMicrosecondsPerPull, onePulls.serviceCPUMicrosecondsPerPull, times: true)) |" }
                        .joined(separator: " "))
                func database(_ figure: PushBenchmark.PullThroughput) -> String {
                    let perNode = (figure.nodesCPU ?? []).map { "\($0.name) \(micros($0.microsecondsPerPush))" }.joined(separator: ", ")
                    return micros(Self.total(figure.nodesCPU)) + (perNode.isEmpty ? "" : " (\(perNode))")
                }
                lines.append("| PostgreSQL CPU per pull, every node | \(micros(Self.total(onePulls.nodesCPU))) | "
                    + figures.map { "\(database($0)) | \(ratio(Self.total($0.nodesCPU), Self.total(onePulls.nodesCPU), times: true)) |" }.joined(separator: " "))
            }
        }
        let one = onePostgreSQL.latency
        lines.append("| push → another device's pull through its stream, p50 / p99 (\(one.streams) streams, \(one.samples) samples) | "
            + String(format: "%.1f / %.1f ms | ", one.p50Milliseconds, one.p99Milliseconds)
            + clusters.map(\.latency).map { cluster in
                String(format: "%.1f / %.1f ms | ", cluster.p50Milliseconds, cluster.p99Milliseconds)
                    + ratio(cluster.p50Milliseconds, one.p50Milliseconds, times: true) + " / "
                    + ratio(cluster.p99Milliseconds, one.p99Milliseconds, times: true) + " |"
            }.joined(separator: " "))
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

import AsyncHTTPClient
import Foundation
import Histogram
import ShortcutSyncStore

extension PushBenchmark {
    /// `bench citus`'s pull part: devices of their own accounts, each holding a view of ten
    /// shortcuts, pull their whole view (no cursor, every page) back to back.
    public struct PullThroughput: Sendable, Codable {
        public var devices: Int
        public var pullsPerSecond: Double
        public var p50Milliseconds: Double
        public var p99Milliseconds: Double
        /// Pulls that did not answer 200.
        public var failedPulls: Int
        public var serviceCPUMicrosecondsPerPull: Double?
        /// Each PostgreSQL node's CPU per pull, where `nodes` names them.
        public var nodesCPU: [NodeCPU]?
    }

    /// `devices` devices of as many accounts push ten donations each, then pull their whole
    /// views back to back for `duration`: each pull is the service's read of the view and its
    /// record of what the device has (`DeviceSyncStore.recordPull`).
    public func pullThroughput(devices count: Int, http: HTTPClient) async throws -> PullThroughput {
        let devices = try await register(devices: count, accounts: count, http: http)
        for device in devices {
            guard try await pushStatus(token: device.token, body: BenchEvents.pushBody(from: 1, count: 10, identifier: nil), to: service,
                                       http: http) == 200 else { throw BenchError("a pull part's device could not push its view") }
        }
        let serviceBefore = servicePID.flatMap(ProcessCPU.of)
        let nodesBefore = nodes.map { ProcessCPU.ofServer($0.postmaster) }
        let deadline = ContinuousClock.now + duration
        let (pulls, histogram, failures) = try await withThrowingTaskGroup(of: (Int, Histogram<UInt64>, Int).self) { group in
            for device in devices {
                group.addTask {
                    var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
                    var pulled = 0, failed = 0
                    while ContinuousClock.now < deadline {
                        let started = ContinuousClock.now
                        do {
                            _ = try await pullPages(service: service, token: device.token, cursor: nil, http: http)
                            pulled += 1
                        } catch is BenchError {
                            failed += 1
                        }
                        histogram.record(UInt64((ContinuousClock.now - started).inSeconds * 1_000_000))
                    }
                    return (pulled, histogram, failed)
                }
            }
            return try await Self.merged(&group)
        }
        let nodesAfter = nodes.map { ProcessCPU.ofServer($0.postmaster) }
        let serviceAfter = servicePID.flatMap(ProcessCPU.of)
        var figure = PullThroughput(devices: count, pullsPerSecond: Double(pulls) / duration.inSeconds,
                                    p50Milliseconds: Double(histogram.valueAtPercentile(50)) / 1000,
                                    p99Milliseconds: Double(histogram.valueAtPercentile(99)) / 1000, failedPulls: failures,
                                    serviceCPUMicrosecondsPerPull: ProcessCPU.microseconds(from: serviceBefore, to: serviceAfter, per: pulls))
        if !nodes.isEmpty {
            figure.nodesCPU = nodes.indices.map { index in
                NodeCPU(name: nodes[index].name, microsecondsPerPush: ProcessCPU.microseconds(from: nodesBefore[index], to: nodesAfter[index], per: pulls))
            }
        }
        report("whole-view pulls, \(count) devices: \(Int(figure.pullsPerSecond)) pulls/s")
        return figure
    }
}

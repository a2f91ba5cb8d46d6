import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// `shortcut-sync health`: asks a running service whether it is ready, for container health checks.
///
/// The slim runtime image has no curl and its `/bin/sh` is dash (no `/dev/tcp`), so the check is
/// the service's own executable: exit 0 when `GET /readyz` answers 200 with `"ready": true`,
/// otherwise one line on standard error saying why, and exit 1.
struct HealthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Exit 0 if the service at --url is ready (GET /readyz), 1 otherwise.")

    @Option(help: "The service's operators' listener (serve --operator-host, --operator-port).")
    var url: String = "http://127.0.0.1:8081"

    @Option(help: "Seconds to wait for the answer.")
    var timeout: Int64 = 5

    @Flag(help: "Also print how fresh the views were over the last five minutes: a push's commit to the poke a stream delivered, and to the first pull that included it (p50, p99).")
    var freshness = false

    func run() async throws {
        let target = url.hasSuffix("/") ? url + "readyz" : url + "/readyz"
        do {
            let request = HTTPClientRequest(url: target)
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(timeout))
            let body = try await response.body.collect(upTo: 64 * 1024)
            let readiness = try? JSONDecoder().decode(Readiness.self, from: Data(body.readableBytesView))
            guard response.status == .ok, readiness?.ready == true else {
                let reason = readiness?.detail.map { ": \($0)" } ?? ""
                throw Unhealthy("\(target) answered \(response.status.code)\(readiness == nil ? " without a readiness document" : " not ready")\(reason)")
            }
            if freshness, let readiness {
                FileHandle.standardOutput.write(Data(readiness.freshnessLine.utf8))
            }
        } catch let unhealthy as Unhealthy {
            Self.report(unhealthy.reason)
            throw ExitCode.failure
        } catch {
            Self.report("\(target) did not answer: \(error)")
            throw ExitCode.failure
        }
    }

    /// The fields of `/readyz` this command reads.
    private struct Readiness: Decodable {
        struct Figures: Decodable {
            var p50Millis: Int64
            var p99Millis: Int64
            var samples: Int
        }

        struct Freshness: Decodable {
            var stream: Figures?
            var pull: Figures?
        }

        var ready: Bool
        var detail: String?
        var freshness: Freshness?

        /// "commit → stream poke: p50 4 ms, p99 31 ms (812 samples)", and the same for pulls.
        var freshnessLine: String {
            func said(_ figures: Figures?) -> String {
                figures.map { "p50 \($0.p50Millis) ms, p99 \($0.p99Millis) ms (\($0.samples) samples)" } ?? "no sample"
            }
            return "freshness over the last 5 minutes: commit → stream poke: \(said(freshness?.stream)); commit → pull: \(said(freshness?.pull))\n"
        }
    }

    private struct Unhealthy: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    private static func report(_ line: String) {
        FileHandle.standardError.write(Data(("not healthy: " + line + "\n").utf8))
    }
}

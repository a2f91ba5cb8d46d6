import Foundation
import ShortcutSyncChildProcess
import ShortcutSyncDatabaseTestSupport
import Testing

/// `shortcut-sync demo`, the first thing the README invites a new user to run.
@Suite struct DemoCommandTests {
    @Test func theDemoEndsWithEveryDeviceShowingTheSameView() async throws {
        let directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("shortcut-sync-demo-\(UUID().uuidString.prefix(8))")
        defer {
            Postmaster.quit(dataDirectory: directory)
            try? FileManager.default.removeItem(at: directory)
        }
        let demo = try await CommandProcess.run(["demo", "--data-dir", directory.path], timeout: .seconds(120))
        defer { demo.forceStop() }
        #expect(demo.exitStatus == 0, "\(demo.output)\n\(demo.errorOutput)")
        #expect(demo.output.contains("converged"))
        // The steps show the collision, the iPad offline with its deletion waiting, and its arrival.
        #expect(demo.output.contains("(conflict)"))
        #expect(demo.output.contains("[offline, 1 waiting]"))
        #expect(demo.output.split(separator: "\n").filter { $0.hasPrefix("   iPad") }.count == 6)
        // Step 6: the iPad asleep, woken through the APNs stand-in, shows the iPhone's phrase.
        #expect(demo.output.contains("The iPad was woken by a background notification"))
        #expect(demo.output.split(separator: "\n").contains { $0.hasPrefix("   iPad") && $0.contains("\"Pumpkin please\"→pumpkin") && $0.contains("[woken]") })
        #expect(Postmaster.running(dataDirectory: directory) == nil, "the demo stops the PostgreSQL it started")
    }
}

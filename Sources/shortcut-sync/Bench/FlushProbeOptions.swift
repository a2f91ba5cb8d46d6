import ArgumentParser
import Foundation

/// Where `bench runaway` and `bench sustained` time the database's disk (`FlushProbe`).
struct FlushProbeOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "A directory on the database's disk, where a 4 KB write is flushed every 50 ms to tell when the disk stalled.",
        discussion: "Without it, the embedded PostgreSQL's data directory; with --database-url, no probe."))
    var flushProbeDirectory: String?

    func validate() throws {
        guard let flushProbeDirectory else { return }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: flushProbeDirectory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ValidationError("--flush-probe-directory \(flushProbeDirectory) is not a directory")
        }
    }

    /// The directory to probe for a run on `location`, if any.
    func directory(_ location: DatabaseLocation) -> URL? {
        flushProbeDirectory.map { URL(fileURLWithPath: $0) } ?? location.embeddedDataDirectory
    }
}

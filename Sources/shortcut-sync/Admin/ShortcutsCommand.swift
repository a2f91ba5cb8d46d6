import ArgumentParser
import Foundation
import ShortcutSyncAdmin
import ShortcutSyncDomain
import ShortcutSyncStore

struct ShortcutsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shortcuts",
        abstract: "A device's view: now, or as it was in the past, replayed from the log.",
        discussion: "--at V folds every event of the account up to and including its version V; --as-of TIME every event recorded by TIME (ISO 8601; without an offset, local time).")

    @OptionGroup var options: AdminOptions
    @Option(help: "The device's id.") var device: IdentifierArgument
    @Option(help: "Replay through this version of the account.") var at: Int64?
    @Option(name: .customLong("as-of"), help: "Replay the events recorded up to this time.") var asOf: String?

    func validate() throws {
        if at != nil && asOf != nil { throw ValidationError("give --at or --as-of, not both") }
        if let at, at < 0 { throw ValidationError("--at must be an account version (0 or more)") }
        if let asOf, ISO8601.parse(asOf) == nil { throw ValidationError("--as-of must be an ISO 8601 time, e.g. 2026-11-22T10:30:00Z") }
    }

    func run() async throws {
        let prefix: LogPrefix = if let at { .throughVersion(at) } else if let asOf { .recordedBy(ISO8601.parse(asOf)!) } else { .all }
        try await options.withOperator { try options.print(try await $0.shortcuts(device: device.uuid, prefix: prefix)) }
    }
}

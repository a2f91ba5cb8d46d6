import ArgumentParser
import Foundation
import ShortcutSyncAdmin
import ShortcutSyncDomain
import ShortcutSyncStore

struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events", abstract: "List an account's events; --follow tails new ones until Ctrl-C.")

    @OptionGroup var options: AdminOptions
    @Option(help: "The account's id.") var account: IdentifierArgument
    @Option(help: "Only this device's events.") var device: IdentifierArgument?
    @Option(help: "Only events of this type: \(EventType.allCases.map(\.rawValue).joined(separator: ", ")).") var type: EventType?
    @Option(help: "Only events after this account version (a page's last line names the next one).") var after: Int64?
    @Option(help: "At most this many events (not with --follow).") var limit: Int?
    @Flag(help: "Keep printing new events as they are committed, until interrupted.") var follow = false

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be 1 or more") }
        if follow && limit != nil { throw ValidationError("--limit lists a page; --follow prints every new event: give one of them") }
        if let after, after < 0 { throw ValidationError("--after must be an account version (0 or more)") }
    }

    func run() async throws {
        let filter = EventFilter(account: account.uuid, device: device?.uuid, type: type, afterVersion: after)
        guard follow else {
            try await options.withOperator { try options.print(try await $0.events(filter, limit: limit ?? 100)) }
            return
        }
        let json = options.json
        try await options.withOperator { admin in
            if !json { Self.write(EventsReport.followHeader) }
            do {
                try await cancellingOnSignal {
                    try await admin.follow(filter) { rows in
                        for row in rows {
                            Self.write(json ? try ScriptJSON.encode(row, pretty: false) : EventsReport.line(row))
                        }
                    }
                }
            } catch is Interrupted {
                // Ctrl-C ends the tail: that is how it is meant to stop.
            }
        }
    }

    private static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

import ArgumentParser
import Foundation
import ShortcutSyncAdmin
import ShortcutSyncDomain
import ShortcutSyncStore

struct AccountsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "accounts", abstract: "List the accounts.")

    @OptionGroup var options: AdminOptions

    func run() async throws {
        try await options.withOperator { try options.print(try await $0.accounts()) }
    }
}

struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "devices", abstract: "List an account's devices.")

    @OptionGroup var options: AdminOptions
    @Option(help: "The account's id.") var account: IdentifierArgument

    func run() async throws {
        try await options.withOperator { try options.print(try await $0.devices(account: account.uuid)) }
    }
}

struct ShortcutsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shortcuts",
        abstract: "A device's view: now, or as it was in the past, replayed from the log.",
        discussion: "--at P folds every event of the account up to and including position P; --as-of TIME every event recorded by TIME (ISO 8601; without an offset, local time).")

    @OptionGroup var options: AdminOptions
    @Option(help: "The device's id.") var device: IdentifierArgument
    @Option(help: "Replay through this log position.") var at: Int64?
    @Option(name: .customLong("as-of"), help: "Replay the events recorded up to this time.") var asOf: String?

    func validate() throws {
        if at != nil && asOf != nil { throw ValidationError("give --at or --as-of, not both") }
        if let at, at < 0 { throw ValidationError("--at must be a log position (0 or more)") }
        if let asOf, ISO8601.parse(asOf) == nil { throw ValidationError("--as-of must be an ISO 8601 time, e.g. 2026-11-22T10:30:00Z") }
    }

    func run() async throws {
        let prefix: LogPrefix = if let at { .throughPosition(at) } else if let asOf { .recordedBy(ISO8601.parse(asOf)!) } else { .all }
        try await options.withOperator { try options.print(try await $0.shortcuts(device: device.uuid, prefix: prefix)) }
    }
}

struct VoiceShortcutsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "voice-shortcuts", abstract: "List an account's voice shortcuts.")

    @OptionGroup var options: AdminOptions
    @Option(help: "The account's id.") var account: IdentifierArgument
    @Flag(help: "Only those whose phrase another voice shortcut owns.") var conflicts = false

    func run() async throws {
        try await options.withOperator { try options.print(try await $0.voiceShortcuts(account: account.uuid, conflictsOnly: conflicts)) }
    }
}

extension EventType: ExpressibleByArgument {}

struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events", abstract: "List an account's events; --follow tails new ones until Ctrl-C.")

    @OptionGroup var options: AdminOptions
    @Option(help: "The account's id.") var account: IdentifierArgument
    @Option(help: "Only this device's events.") var device: IdentifierArgument?
    @Option(help: "Only events of this type: \(EventType.allCases.map(\.rawValue).joined(separator: ", ")).") var type: EventType?
    @Option(help: "Only events after this log position.") var after: Int64?
    @Option(help: "At most this many events (not with --follow).") var limit: Int?
    @Flag(help: "Keep printing new events as they are committed, until interrupted.") var follow = false

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be 1 or more") }
        if follow && limit != nil { throw ValidationError("--limit lists a page; --follow prints every new event: give one of them") }
        if let after, after < 0 { throw ValidationError("--after must be a log position (0 or more)") }
    }

    func run() async throws {
        let filter = EventFilter(account: account.uuid, device: device?.uuid, type: type, afterPosition: after)
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

struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history", abstract: "Every event that touched a shortcut or its voice shortcuts, with its effect.")

    @OptionGroup var options: AdminOptions
    @Option(help: "The account's id.") var account: IdentifierArgument
    @Option(help: "The shortcut, as BUNDLE/IDENTIFIER.") var shortcut: String

    func validate() throws {
        _ = try shortcutID()
    }

    private func shortcutID() throws -> ShortcutID {
        guard let slash = shortcut.firstIndex(of: "/"), slash != shortcut.startIndex, shortcut.index(after: slash) != shortcut.endIndex else {
            throw ValidationError("--shortcut must be BUNDLE/IDENTIFIER, e.g. com.example.soup/tomato")
        }
        return ShortcutID(bundleId: String(shortcut[..<slash]), identifier: String(shortcut[shortcut.index(after: slash)...]))
    }

    func run() async throws {
        let id = try shortcutID()
        try await options.withOperator { try options.print(try await $0.history(account: account.uuid, shortcut: id)) }
    }
}

struct ProjectionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "projections", abstract: "The worker's projections: status, rebuild.", subcommands: [Status.self, Rebuild.self])

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status", abstract: "Checkpoint, head, lag, and what holds the log's horizon back.")

        @OptionGroup var options: AdminOptions

        func run() async throws {
            try await options.withOperator { try options.print(try await $0.status()) }
        }
    }

    struct Rebuild: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rebuild",
            abstract: "Replay the log beside the live projections and swap them in, while serving goes on.",
            discussion: "A running worker (serve or worker) keeps the live side moving meanwhile; the swap waits for it to reach the rebuild.")

        @OptionGroup var options: AdminOptions

        func run() async throws {
            let progress = ProgressLine(task: "rebuild")
            try await options.withOperator { admin in
                let report = try await admin.rebuild { await progress.update($0, of: $1) }
                await progress.finish()
                try options.print(report)
            }
        }
    }
}

struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify", abstract: "Replay the log and compare with the live projections; exit 1 on any difference.")

    @OptionGroup var options: AdminOptions

    func run() async throws {
        let progress = ProgressLine(task: "verify")
        var consistent = true
        try await options.withOperator { admin in
            let report = try await admin.verify { await progress.update($0, of: $1) }
            await progress.finish()
            try options.print(report)
            consistent = report.consistent
        }
        if !consistent { throw ExitCode(1) }
    }
}

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write an account, its devices and its events as NDJSON (see the README for the format).")

    @OptionGroup var options: AdminOptions
    @Option(help: "The account's id.") var account: IdentifierArgument
    @Option(help: "Write to this file instead of standard output.") var output: String?

    func run() async throws {
        try await options.withOperator { admin in
            let text = try await admin.export(account: account.uuid).joined(separator: "\n") + "\n"
            if let output {
                do {
                    try Data(text.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
                } catch {
                    throw AdminUsageError("cannot write \(output): \(error.localizedDescription)")
                }
            } else {
                FileHandle.standardOutput.write(Data(text.utf8))
            }
        }
    }
}

struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Store an export: adds only what the database lacks (the same file twice adds nothing); all or nothing.")

    @OptionGroup var options: AdminOptions
    @Argument(help: "The export to read; standard input when absent or -.") var file: String?

    func run() async throws {
        let data: Data
        if let file, file != "-" {
            guard let read = FileManager.default.contents(atPath: file) else {
                throw AdminOptions.exit(for: AdminUsageError("cannot read \(file)"))
            }
            data = read
        } else {
            data = FileHandle.standardInput.readDataToEndOfFile()
        }
        let progress = ProgressLine(task: "import")
        try await options.withOperator { admin in
            let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            let contents = try AccountArchive.read(lines)
            await progress.update(lines.count, of: lines.count)
            let report = try await admin.importAccount(contents)
            await progress.finish()
            try options.print(report)
        }
    }
}

struct EraseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "erase", abstract: "Remove an account's events, projections, devices and tokens, in one transaction.")

    @OptionGroup var options: AdminOptions
    @Option(help: "The account's id.") var account: IdentifierArgument
    @Flag(help: "Do not ask for confirmation.") var yes = false

    func run() async throws {
        if !yes {
            guard isatty(STDIN_FILENO) == 1 else {
                throw AdminOptions.exit(for: AdminUsageError("erase asks for confirmation on a terminal; give --yes to erase without one"))
            }
            FileHandle.standardError.write(Data("Erase account \(account.uuid.uuidString.lowercased()) and everything of it, for good? Type yes: ".utf8))
            guard readLine()?.trimmingCharacters(in: .whitespaces) == "yes" else {
                FileHandle.standardError.write(Data("Nothing was erased.\n".utf8))
                throw ExitCode(1)
            }
        }
        try await options.withOperator { try options.print(try await $0.erase(account: account.uuid)) }
    }
}

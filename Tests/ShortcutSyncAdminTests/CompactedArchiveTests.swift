import Foundation
import PostgresNIO
import ShortcutSyncAdmin
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

private let logger = TestDatabase.shared.logger

/// `admin export` and `admin import` of a compacted account (issue 58): the file carries the
/// horizon, the snapshot's rows and the events the log kept, with their versions; imported
/// elsewhere the account folds as it was, a second import adds nothing, and a file cut at another
/// place than the database's history, or with a snapshot row that does not fit, stores nothing.
@Suite struct CompactedArchiveTests {
    /// A history with a bit of everything, compacted through version 14 of 20: three devices
    /// donate (two in one group), assign phrases (two collide, one renamed, one deleted), delete,
    /// report their apps, forget and pause learning; after the horizon, more of the same, and a
    /// late donation of the watch, offline since before the horizon.
    private struct History {
        var phone = DeviceScript(detail: .full)
        var pad: DeviceScript
        var watch: DeviceScript
        let soupVoice = UUID(), leekVoice = UUID(), teaVoice = UUID()
        /// What was pushed before the compaction, by device.
        var compacted: [(UUID, AcceptedEvent)] = []
        var devices: [UUID] { [phone.deviceId, pad.deviceId, watch.deviceId] }
        var account: UUID { phone.account }

        init() {
            pad = DeviceScript(account: phone.account, detail: .full)
            watch = DeviceScript(account: phone.account, detail: .full)
        }

        /// Versions 1…14, each a push of its own, clocks rising: the watch's last push (version 5) is below the horizon.
        mutating func beforeTheHorizon() -> [(UUID, AcceptedEvent)] {
            let t: Int64 = 1_763_000_000_000
            return [
                (phone.deviceId, phone.donate("tomato", at: t)),
                (pad.deviceId, pad.donate("leek", group: "soups", at: t + 10)),
                (phone.deviceId, phone.donate("pumpkin", group: "soups", at: t + 20)),
                (phone.deviceId, phone.report(["com.example.soup", "com.example.tea"], at: t + 30)),
                (watch.deviceId, watch.donate("tea", bundle: "com.example.tea", at: t + 40)),
                (phone.deviceId, phone.addVoice(soupVoice, phrase: "Soup time", to: "tomato", at: t + 50)),
                (pad.deviceId, pad.addVoice(leekVoice, phrase: "soup time!", to: "leek", at: t + 60)),
                (phone.deviceId, phone.addVoice(teaVoice, phrase: "Tea please", to: "tea", bundle: "com.example.tea", at: t + 70)),
                (pad.deviceId, pad.donate("leek", group: "soups", at: t + 3_600_000)),
                (phone.deviceId, phone.forget(.shortcut(ShortcutID(bundleId: "com.example.soup", identifier: "pumpkin")), at: t + 3_600_010)),
                (pad.deviceId, pad.delete(.identifiers(["tomato"]), at: t + 3_600_020)),
                (phone.deviceId, phone.donate("tomato", at: t + 7_200_000)),
                (pad.deviceId, pad.pause(.device(pad.deviceId), at: t + 7_200_010)),
                (phone.deviceId, phone.donate("leek", group: "soups", at: t + 86_400_000)),
            ]
        }

        /// Versions 15…20, after the horizon; the watch's donation is older than it (a late event).
        mutating func afterTheHorizon() -> [(UUID, AcceptedEvent)] {
            let t: Int64 = 1_763_000_000_000 + 90_000_000
            return [
                (pad.deviceId, pad.updateVoice(leekVoice, phrase: "Leek please", at: t)),
                (phone.deviceId, phone.donate("pumpkin", group: "soups", at: t + 10)),
                (watch.deviceId, watch.donate("tea", bundle: "com.example.tea", at: 1_763_000_000_500)),
                (phone.deviceId, phone.deleteVoice(teaVoice, at: t + 20)),
                (pad.deviceId, pad.delete(.groupIdentifier("soups"), at: t + 30)),
                (phone.deviceId, phone.donate("tomato", at: t + 3_600_000)),
            ]
        }
    }

    /// The account of `history` on `client`, its first part pushed and compacted through its
    /// last version (14), then the rest pushed.
    private func compactedAccount(_ history: inout History, client: PostgresClient) async throws {
        try await register([history.phone, history.pad, history.watch], client: client)
        history.compacted = history.beforeTheHorizon()
        try await push(history.compacted, history.account, client: client)
        let compaction = try await ProjectionStore(client: client, logger: logger).compact(account: history.account, through: 14)
        #expect(compaction.outcome == .compacted && compaction.horizonVersion == 14 && compaction.eventsRemoved > 0, "\(compaction)")
        try await push(history.afterTheHorizon(), history.account, client: client)
    }

    private func push(_ events: [(UUID, AcceptedEvent)], _ account: UUID, client: PostgresClient) async throws {
        let store = PostgresEventStore(client: client, logger: logger)
        for (device, event) in events {
            #expect(try await store.append([event.event], account: account, device: device).appended == 1)
        }
    }

    /// What the devices see (`admin shortcuts`) and what the suggestions offer, as the operators read them.
    private func picture(of history: History, client: PostgresClient) async throws -> [String] {
        let admin = Operator(client: client, logger: logger)
        var picture: [String] = []
        for device in history.devices {
            let view = try await admin.shortcuts(device: device).view
            picture.append(try ScriptJSON.encode(view.shortcuts.sorted { $0.key.description < $1.key.description }.map(\.value)))
            picture.append(try ScriptJSON.encode(view.voiceShortcuts.values.sorted { $0.voiceShortcutId.uuidString < $1.voiceShortcutId.uuidString }))
            picture.append(try await admin.suggestions(device: device, at: Date(timeIntervalSince1970: 1_763_200_000), utcOffsetMinutes: 60,
                                                       limit: 10).text)
        }
        picture.append(try await admin.voiceShortcuts(account: history.account, conflictsOnly: false).text)
        return picture
    }

    private func read(_ lines: [String]) throws -> AccountArchive.Contents {
        try AccountArchive.read(lines.map { Substring($0) })
    }

    /// `body` with two databases, the source holding the compacted account of a `History`, the target empty.
    private func withCompactedAccount(_ body: (_ source: PostgresClient, _ target: PostgresClient, inout History) async throws -> Void)
        async throws {
        try await TestDatabase.withClient { source, _ in
            try await TestDatabase.withClient { target, _ in
                var history = History()
                try await compactedAccount(&history, client: source)
                try await body(source, target, &history)
            }
        }
    }

    @Test func aCompactedAccountImportedElsewhereFoldsAsItWas() async throws {
        try await withCompactedAccount { source, target, history in
            let account = history.account
            let sourceViews = try await ProjectionStore(client: source, logger: logger).fullViews(account: account, devices: history.devices)
            #expect(sourceViews[0].shortcuts.count >= 2 && !sourceViews[0].voiceShortcuts.isEmpty)

            let lines = try await Operator(client: source, logger: logger).export(account: account)
            // The account, three devices, the horizon, the snapshot's rows, the kept events with their versions.
            #expect(lines[4].hasPrefix(#"{"key":{"deviceId":"#) && lines[4].contains(#""kind":"horizon""#) && lines[4].contains(#""version":14"#),
                    "\(lines[4])")
            let snapshotLines = lines.filter { $0.hasPrefix(#"{"kind":"snapshot","#) }
            #expect(Set(snapshotLines.map { $0.components(separatedBy: #""table":""#).last ?? "" }).count >= 5)
            let eventLines = lines.filter { $0.contains(#""kind":"event""#) }
            let versions = eventLines.compactMap { Int64($0.components(separatedBy: #""version":"#).last?.dropLast() ?? "") }
            #expect(versions.count == eventLines.count && versions == versions.sorted() && Array(versions.suffix(6)) == Array(15...20))
            #expect(versions.count < 20, "the events compacted away are not in the file")
            // What recognises a retry of them: each device's fingerprints, one line a device here.
            let retryLines = lines.filter { $0.contains(#""kind":"retry""#) }
            #expect(retryLines.count == 3 && retryLines.allSatisfy { $0.contains(#""firstSeq":1,"#) }, "\(retryLines)")
            let contents = try read(lines)
            #expect(contents.snapshot?.horizon.version == 14 && contents.snapshot?.rows.count == snapshotLines.count)

            let importer = Operator(client: target, logger: logger)
            let first = try await importer.importAccount(contents)
            #expect(first.accountsAdded == 1 && first.devicesAdded == 3 && first.eventsAdded == versions.count)
            #expect(first.snapshotRowsAdded == snapshotLines.count && first.compacted?.version == 14)
            #expect(first.text.contains("compacted through version 14") && first.text.contains("snapshot row"), "\(first.text)")
            // Folded to the horizon; the maintenance tasks fold the events after it.
            let targetStore = ProjectionStore(client: target, logger: logger)
            #expect(try await targetStore.head(account: account) == (20, 14))
            try await targetStore.foldAll()
            #expect(try await targetStore.head(account: account) == (20, 20))
            #expect(try await targetStore.fullViews(account: account, devices: history.devices) == sourceViews)
            let pictureThere = try await picture(of: history, client: target)
            #expect(try await pictureThere == picture(of: history, client: source))
            #expect(try await OperatorStore(client: target, logger: logger).horizon(of: account)?.version == 14)
            let verified = try await importer.verify { _, _ in }
            #expect(verified.consistent && verified.accountsCompared == 1, "\(verified.differences.prefix(3))")
            // Exported again, the same file (the log's positions aside): the same snapshot, events and learning.
            #expect(try await importer.export(account: account).map(withoutPosition) == lines.map(withoutPosition))

            // The same file again: nothing changes, and the report says so.
            let second = try await importer.importAccount(try read(lines))
            #expect(second.accountsAdded == 0 && second.devicesAdded == 0 && second.eventsAdded == 0 && second.snapshotRowsAdded == 0)
            #expect(second.eventsAlreadyStored == versions.count && second.text.contains("nothing added"), "\(second.text)")
            let groupsThere = try await rowCount("snapshot.projection_donation_groups", account, client: target)
            #expect(try await groupsThere == rowCount("snapshot.projection_donation_groups", account, client: source))

            // The watch's pushes the log kept, again: its last before the compaction (version 5, an
            // anchor below the horizon) and the late one (17): retries, nothing stored.
            let store = PostgresEventStore(client: target, logger: logger)
            let kept = try await OperatorStore(client: target, logger: logger).accountLog(account, .all)
                .filter { $0.deviceId == history.watch.deviceId }
            #expect(kept.first?.version == 5 && kept.last?.event.seq == 2 && kept.last?.version == 17)
            for event in kept {
                let retry = try await store.append([event.event], account: account, device: history.watch.deviceId)
                #expect(retry.appended == 0 && retry.lastAcceptedSeq == 2)
            }
            // Every push before the compaction, again: retries too, though the log no longer holds most of them.
            for (device, event) in history.compacted {
                #expect(try await store.append([event.event], account: account, device: device).appended == 0)
            }
            // A new push after the import folds as on the exporting database.
            let next = [(history.phone.deviceId, history.phone.donate("pumpkin", group: "soups", at: 1_763_100_000_000)),
                        (history.watch.deviceId, history.watch.delete(.all, bundle: "com.example.tea", at: 1_763_000_000_001))]
            try await push(next, account, client: target)
            try await push(next, account, client: source)
            let after = try await targetStore.fullViews(account: account, devices: history.devices)
            let sourceAfter = try await ProjectionStore(client: source, logger: logger).fullViews(account: account, devices: history.devices)
            #expect(after == sourceAfter)
            #expect(after != sourceViews)
            #expect(try await importer.verify { _, _ in }.consistent)
        }
    }

    @Test func aCompactedFileIntoAnotherHistoryIsRefusedAndChangesNothing() async throws {
        try await TestDatabase.withClient { source, _ in
            try await TestDatabase.withClient { target, _ in
                var history = History()
                try await register([history.phone, history.pad, history.watch], client: source)
                try await push(history.beforeTheHorizon(), history.account, client: source)
                let account = history.account
                let exporter = Operator(client: source, logger: logger)
                let uncompacted = try await exporter.export(account: account)
                #expect(!uncompacted.contains { $0.contains(#""kind":"horizon""#) || $0.contains(#""kind":"snapshot""#) })
                _ = try await ProjectionStore(client: source, logger: logger).compact(account: account, through: 9)
                let through9 = try await exporter.export(account: account)
                try await push(history.afterTheHorizon(), account, client: source)
                let through9Later = try await exporter.export(account: account)
                // Through the head (20): the late event, 17, is older than 10…16, so no version between is a clean cut.
                #expect(try await ProjectionStore(client: source, logger: logger).compact(account: account, through: 20).horizonVersion == 20)
                let through20 = try await exporter.export(account: account)

                let importer = Operator(client: target, logger: logger)
                func refused(_ lines: [String], saying words: [String]) async throws {
                    let before = try await tableCounts(account, client: target)
                    do {
                        _ = try await importer.importAccount(try read(lines))
                        Issue.record("the import was not refused")
                    } catch let conflict as ImportConflict {
                        for word in words { #expect(conflict.description.contains(word), "\(conflict)") }
                        #expect(!conflict.description.contains("\n"))
                    }
                    #expect(try await tableCounts(account, client: target) == before, "a refused import changes nothing")
                }

                // Stored uncompacted here: the compacted file names both histories.
                #expect(try await importer.importAccount(try read(uncompacted)).eventsAdded == 14)
                try await ProjectionStore(client: target, logger: logger).foldAll()
                try await refused(through9, saying: ["is stored here uncompacted, at version 14", "the file holds it compacted through version 9 ("])
                // Another database, compacted through 9 by the file: the file cut at 20 is another history,
                // and so is the uncompacted one (its events up to 9 may be those compacted away).
                try await TestDatabase.withClient { other, _ in
                    let importer = Operator(client: other, logger: logger)
                    #expect(try await importer.importAccount(try read(through9)).compacted?.version == 9)
                    try await ProjectionStore(client: other, logger: logger).foldAll()
                    let before = try await tableCounts(account, client: other)
                    for (lines, words) in [(through20, ["compacted through version 9 (", "compacted through version 20 ("]),
                                           (uncompacted, ["not later than its horizon", "compacted through version 9 here"])] {
                        do {
                            _ = try await importer.importAccount(try read(lines))
                            Issue.record("the import was not refused")
                        } catch let conflict as ImportConflict {
                            for word in words { #expect(conflict.description.contains(word), "\(conflict)") }
                        }
                        #expect(try await tableCounts(account, client: other) == before)
                    }
                    // The same history, with the events after the horizon that the database lacks: they are added.
                    let later = try await importer.importAccount(try read(through9Later))
                    #expect(later.eventsAdded == 6 && later.snapshotRowsAdded == 0 && later.eventsAlreadyStored > 0, "\(later)")
                    let store = ProjectionStore(client: other, logger: logger)
                    try await store.foldAll()
                    let views = try await store.fullViews(account: account, devices: history.devices)
                    #expect(try await views == ProjectionStore(client: source, logger: logger).fullViews(account: account, devices: history.devices))
                    #expect(try await importer.verify { _, _ in }.consistent)
                }
            }
        }
    }

    /// A snapshot line that cannot be read, or whose row does not fit its table, is named; nothing of the file is stored.
    @Test func aBrokenSnapshotLineIsNamedAndNothingIsStored() async throws {
        try await withCompactedAccount { source, target, history in
            let account = history.account
            let lines = try await Operator(client: source, logger: logger).export(account: account)
            let first = try #require(lines.firstIndex { $0.hasPrefix(#"{"kind":"snapshot","#) })
            let group = try #require(lines.firstIndex { $0.hasSuffix(#""table":"projection_donation_groups"}"#) })
            let retry = try #require(lines.firstIndex { $0.contains(#""kind":"retry""#) })
            let retryDevice = try #require(history.devices.first { lines[retry].contains(#""deviceId":""# + $0.uuidString) })
            func broken(_ index: Int, _ change: (String) -> String) -> [String] {
                var lines = lines
                lines[index] = change(lines[index])
                return lines
            }
            // Read errors, named by line.
            for (file, line, words) in [
                (broken(group) { $0.replacingOccurrences(of: #""table":"projection_donation_groups""#, with: #""table":"events""#) }, group + 1,
                 "unknown snapshot table \"events\""),
                (broken(group) { $0.replacingOccurrences(of: account.uuidString.lowercased(), with: UUID().uuidString.lowercased()) }, group + 1,
                 "account_id is not the account's"),
                (broken(first) { $0.replacingOccurrences(of: #""row":{"#, with: #""row":"x","rows":{"#) }, first + 1, "not a valid snapshot line"),
                (lines.filter { !$0.hasSuffix(#""table":"projection_accounts"}"#) }, 5, "one projection_accounts row"),
                (broken(lines.count - 1) { _ in lines[first] }, lines.count, "after the events"),
                (broken(retry) { $0.replacingOccurrences(of: #""firstSeq":1"#, with: #""firstSeq":0"#) }, retry + 1, "from a firstSeq of 1 or more"),
                (broken(retry) { $0.replacingOccurrences(of: #""fingerprints":""#, with: #""fingerprints":"a"#) }, retry + 1, "four a seq"),
                (broken(retry) { $0.replacingOccurrences(of: retryDevice.uuidString, with: UUID().uuidString) }, retry + 1, "is not listed before it"),
                (broken(retry + 1) { _ in lines[retry] }, retry + 2, "in the order of their seqs"),
            ] {
                do {
                    _ = try read(file)
                    Issue.record("\(words): read")
                } catch let error as AccountArchive.LineError {
                    #expect(error.line == line && error.description.contains(words), "\(error)")
                }
            }
            // Rows that do not fit the table, found by the database: named by line, nothing stored.
            for (file, words) in [
                (broken(group) { $0.replacingOccurrences(of: #""latest_key":"\\x"#, with: #""latest_key":"\\xzz"#) }, "does not fit table projection_donation_groups"),
                (broken(group) { $0.replacingOccurrences(of: #""latest_key":"#, with: #""latest_keys":"#) }, "missing latest_key; unknown latest_keys"),
            ] {
                do {
                    _ = try await Operator(client: target, logger: logger).importAccount(try read(file))
                    Issue.record("\(words): imported")
                } catch let conflict as ImportConflict {
                    #expect(conflict.line == group + 1 && conflict.description.contains(words), "\(conflict)")
                }
                #expect(try await tableCounts(account, client: target).allSatisfy { $0 == 0 })
            }
            // A line that names its row twice, or a row that names a column twice (issue 65, item
            // 5): JSON's readers differ in which one counts, and the second here is another
            // account's. Refused, named by line; nothing stored in either account.
            let other = UUID()
            let prefix = #"{"kind":"snapshot","row":"#, suffix = #","table":"projection_donation_groups"}"#
            #expect(lines[group].hasPrefix(prefix) && lines[group].hasSuffix(suffix), "\(lines[group])")
            let row = String(lines[group].dropFirst(prefix.count).dropLast(suffix.count))
            let othersRow = row.replacingOccurrences(of: account.uuidString.lowercased(), with: other.uuidString.lowercased())
            for (file, words) in [
                (broken(group) { _ in prefix + row + #","row":"# + othersRow + suffix }, "names a member twice"),
                (broken(group) { _ in prefix + row.dropLast() + #","account_id":""# + other.uuidString.lowercased() + #""}"# + suffix },
                 "names a column twice"),
            ] {
                do {
                    _ = try await Operator(client: target, logger: logger).importAccount(try read(file))
                    Issue.record("\(words): imported")
                } catch let conflict as ImportConflict {
                    #expect(conflict.line == group + 1 && conflict.description.contains(words), "\(conflict)")
                } catch let error as AccountArchive.LineError {
                    // A reader that takes the last of the two sees the other account's row.
                    #expect(error.line == group + 1 && error.description.contains("account_id is not the account's"), "\(error)")
                }
                #expect(try await tableCounts(account, client: target).allSatisfy { $0 == 0 })
                #expect(try await tableCounts(other, client: target).allSatisfy { $0 == 0 })
            }
        }
    }

    /// Issue 65, item 6: values no fold of the horizon writes — a group's donations at Int64's
    /// limit, a horizon's clock counter at it — are refused by line before anything is stored
    /// (imported, the next fold of the group would have trapped, and the process with it).
    @Test func aSnapshotValueNoFoldWritesIsRefusedAndNothingIsStored() async throws {
        try await withCompactedAccount { source, target, history in
            let account = history.account
            let lines = try await Operator(client: source, logger: logger).export(account: account)
            let group = try #require(lines.firstIndex { $0.hasSuffix(#""table":"projection_donation_groups"}"#) })
            let accountRow = try #require(lines.firstIndex { $0.hasSuffix(#""table":"projection_accounts"}"#) })
            let horizon = try #require(lines.firstIndex { $0.contains(#""kind":"horizon""#) })
            func broken(_ index: Int, _ pattern: String, _ replacement: String) -> [String] {
                var edited = lines
                edited[index] = lines[index].replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
                #expect(edited[index] != lines[index], "the edit of line \(index + 1) changed nothing")
                return edited
            }
            for (file, line) in [
                (broken(group, #""donations":[0-9]+"#, #""donations":9223372036854775807"#), group + 1),
                (broken(group, #""donations":[0-9]+"#, #""donations":0"#), group + 1),
                (broken(group, #""latest_version":[0-9]+"#, #""latest_version":99999999999999999999"#), group + 1),
                (broken(accountRow, #""shortcut_count":[0-9]+"#, #""shortcut_count":-1"#), accountRow + 1),
                (broken(accountRow, #""max_hlc_counter":[0-9]+"#, #""max_hlc_counter":"many""#), accountRow + 1),
            ] {
                do {
                    _ = try await Operator(client: target, logger: logger).importAccount(try read(file))
                    Issue.record("line \(line) imported: \(file[line - 1])")
                } catch let conflict as ImportConflict {
                    // Beyond a fold's bounds, or beyond the table's own (its type, its CHECK): refused by line either way.
                    #expect(conflict.line == line && ["beyond what a fold", "does not fit table"].contains { conflict.description.contains($0) },
                            "\(conflict)")
                } catch let error as AccountArchive.LineError {
                    // A value the line's reader cannot take at all is named by it.
                    #expect(error.line == line, "\(error)")
                }
                #expect(try await tableCounts(account, client: target).allSatisfy { $0 == 0 })
            }
            // A horizon whose clock has no clock after it.
            do {
                _ = try read(broken(horizon, #""counter":[0-9]+"#, #""counter":9223372036854775807"#))
                Issue.record("a horizon at the counter's limit was read")
            } catch let error as AccountArchive.LineError {
                #expect(error.line == horizon + 1 && error.description.contains("horizon's version must be"), "\(error)")
            }
        }
    }
}

/// How many rows of the account each table holds that an import writes.
private func tableCounts(_ account: UUID, client: PostgresClient) async throws -> [Int64] {
    var counts: [Int64] = []
    for table in ["accounts", "devices", "events", "account_heads", "projection_accounts", "projection_shortcuts",
                  "snapshot.projection_accounts", "snapshot.projection_shortcuts", "snapshot.projection_donation_groups"] {
        counts.append(try await rowCount(table, account, client: client))
    }
    return counts
}

/// How many rows of the account `table` holds.
private func rowCount(_ table: String, _ account: UUID, client: PostgresClient) async throws -> Int64 {
    try await client.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table) WHERE account_id = '\(account.uuidString)'"),
                           logger: logger).decode(Int64.self).collectAll().first ?? 0
}

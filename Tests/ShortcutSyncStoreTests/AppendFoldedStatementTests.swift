import Foundation
import PostgresNIO
@testable import ShortcutSyncDomain
@testable import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

/// The push's statement is assembled from the fold's arms (`FoldArm`, the maintenance write's
/// text) in one of two forms: every arm, or the arms of a push of donations alone. Its values
/// are the same in both, their types declared, so a form without some arms still binds them all.
@Suite struct AppendFoldedStatementTests {
    @Test func everyParameterIsNumberedOnceAndDeclaredWithTheTypeItsArmCasts() {
        let sql = AppendFoldedStatement<EveryFoldArm>.sql
        let types = AppendFoldedStatement<EveryFoldArm>.bindingDataTypes
        let numbers = Set(sql.matches(of: /\$([0-9]+)/).compactMap { Int($0.1) })
        #expect(numbers == Set(1...types.count))
        #expect(types.count == 61)
        let named: [String: PostgresDataType] = [
            "uuid[]": .uuidArray, "int8[]": .int8Array, "text[]": .textArray, "bytea[]": .byteaArray, "bool[]": .boolArray,
        ]
        var cast = 0
        for match in sql.matches(of: /\$([0-9]+)::([a-z0-9]+\[\])/) {
            guard let number = Int(match.1), let type = named[String(match.2)] else {
                Issue.record("a parameter cast to \(match.2), which this test does not know")
                continue
            }
            #expect(types[number - 1] == type, "$\(number) is cast to \(match.2)")
            cast += 1
        }
        #expect(cast >= 40, "the arms' arrays are cast where they are read")
    }

    @Test func theSmallerFormHoldsOnlyItsArmsAndTheAppend() {
        let small = AppendFoldedStatement<DonationFoldArms>.sql
        let every = AppendFoldedStatement<EveryFoldArm>.sql
        for arm in FoldArm.allCases {
            #expect(every.contains("\(arm.rawValue) AS ("))
            #expect(small.contains("\(arm.rawValue) AS (") == DonationFoldArms.arms.contains(arm), "\(arm)")
        }
        for part in ["moved AS (", "inserted AS (", "go AS (", "SELECT count(*), (SELECT mark FROM moved) FROM inserted"] {
            #expect(small.contains(part) && every.contains(part))
        }
        // The maintenance write holds every arm, with the same text.
        for arm in FoldArm.allCases {
            let written = arm.sql.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n")
            #expect(FoldSQL.write.contains(written) && every.contains(written), "\(arm)")
        }
    }

    /// A push of donations alone takes the smaller form; a deletion, a voice shortcut or an app
    /// report needs arms it does not hold.
    @Test func thePushPicksTheFormThatHoldsEveryArmItsFoldWrites() throws {
        let shortcut = ShortcutID(bundleId: "com.example.soup", identifier: "soup-1")
        let group = DonationGroupID(shortcut: shortcut, group: "")
        var donations = AccountBatchResult(version: 2, maxHLC: HLCTimestamp(wallMillis: 1, counter: 0), lastVersion: 2)
        donations.shortcuts[shortcut] = .some(nil)
        donations.groups[group] = .some(nil)
        #expect(FoldArm.writing(donations) == [.account, .goneGroups, .shortcuts])
        #expect(!DonationFoldArms.holds(donations), "a group emptied by a deletion is deleted")

        var kept = AccountBatchResult(version: 2, maxHLC: HLCTimestamp(wallMillis: 1, counter: 0), lastVersion: 2)
        kept.shortcuts[shortcut] = .some(nil)
        #expect(DonationFoldArms.holds(kept))
        kept.devices[UUID()] = DeviceAppsChange(reported: Stamped(key: EventKey(hlc: HLCTimestamp(wallMillis: 1, counter: 0), deviceId: UUID(), seq: 1),
                                                                 value: ["com.example.soup"]), appsChanged: true)
        #expect(!DonationFoldArms.holds(kept))
        #expect(EveryFoldArm.holds(kept) && EveryFoldArm.holds(donations))
    }
}

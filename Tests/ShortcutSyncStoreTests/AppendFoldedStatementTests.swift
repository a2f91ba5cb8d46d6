import Foundation
@testable import ShortcutSyncStore
import Testing

/// The push's statement writes a fold as the maintenance tasks' statement does: its arms are
/// `FoldWriteStatement`'s, with the same parameters (both statements are written whole, so that
/// each reads on its own and the statement check reads both).
@Suite struct AppendFoldedStatementTests {
    @Test func itsFoldArmsAreTheFoldWritesWordForWord() throws {
        let push = try #require(Self.foldArms(of: AppendFoldedStatement.sql), "the push's statement has no fold arms")
        let maintenance = try #require(Self.foldArms(of: FoldSQL.write), "the fold write has no arms")
        #expect(push == maintenance)
        #expect(push.contains("$43::bytea[]"), "the arms' last parameter is $43, before the append's")
    }

    @Test func theAppendsParametersFollowTheArms() {
        let numbers = Set(AppendFoldedStatement.sql.matches(of: /\$([0-9]+)/).compactMap { Int($0.1) })
        #expect(numbers == Set(1...53))
    }

    /// From the first arm after `go` (the account's row) to the last one's end.
    static func foldArms(of sql: String) -> Substring? {
        guard let start = sql.range(of: "), account AS ("), let end = sql.range(of: "\n)\nSELECT", options: .backwards),
              start.lowerBound < end.lowerBound else { return nil }
        return sql[start.lowerBound..<end.lowerBound]
    }
}

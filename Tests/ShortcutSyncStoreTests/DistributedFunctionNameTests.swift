import Foundation
import PostgresNIO
@testable import ShortcutSyncStore
import Testing

/// Issue 65, item 10: each build's distributed functions have names of their own, from their
/// bodies, so that during a rolling upgrade a server of one build never calls (nor replaces)
/// the body of another.
@Suite struct DistributedFunctionNameTests {
    @Test func aFunctionIsNamedByItsBody() {
        let one = DistributedFunctions.named("push_write_folded", by: "CREATE FUNCTION a() RETURNS int AS 'SELECT 1'")
        let other = DistributedFunctions.named("push_write_folded", by: "CREATE FUNCTION a() RETURNS int AS 'SELECT 2'")
        #expect(one.hasPrefix("push_write_folded_") && one.count == "push_write_folded_".count + 12)
        #expect(one != other)
        #expect(one == DistributedFunctions.named("push_write_folded", by: "CREATE FUNCTION a() RETURNS int AS 'SELECT 1'"))
        #expect(PushWriteFunction.signature.hasPrefix("public.\(PushWriteFunction.name)("))
        #expect(PushWriteFunction.definition.sql.contains("FUNCTION \(PushWriteFunction.signature)"))
        #expect(RecordPullFunction.definition.sql.contains("FUNCTION \(RecordPullFunction.signature)"))
        #expect(PushWriteFunction.name != RecordPullFunction.name)
    }
}

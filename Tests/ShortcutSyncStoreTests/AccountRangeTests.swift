import Foundation
import ShortcutSyncStore
import Testing

/// The ranges a rebuild folds side by side hold every account exactly once.
@Suite struct AccountRangeTests {
    @Test(arguments: [1, 2, 3, 7])
    func rangesAreContiguousAndHoldEveryAccountOnce(count: Int) {
        let ranges = AccountRange.split(into: count)
        #expect(ranges.count == count)
        #expect(ranges.first?.lowest == AccountRange.all.lowest)
        #expect(ranges.last?.end == nil)
        for (range, next) in zip(ranges, ranges.dropFirst()) {
            #expect(range.end == next.lowest)
        }
        func contains(_ range: AccountRange, _ id: UUID) -> Bool {
            let bytes = { (u: UUID) in withUnsafeBytes(of: u.uuid) { Array($0) } }
            let after = !bytes(id).lexicographicallyPrecedes(bytes(range.lowest))
            let before = range.end.map { bytes(id).lexicographicallyPrecedes(bytes($0)) } ?? true
            return after && before
        }
        for _ in 0..<200 {
            let id = UUID()
            #expect(ranges.filter { contains($0, id) }.count == 1, "\(id)")
        }
    }
}

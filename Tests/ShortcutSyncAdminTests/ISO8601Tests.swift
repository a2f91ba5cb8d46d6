import Foundation
import ShortcutSyncAdmin
import Testing

/// The one way admin writes and reads times.
@Suite struct ISO8601Tests {
    @Test func whatIsWrittenReadsBackToTheMicrosecond() throws {
        for seconds in [0.0, 1_795_344_271.018575, 1_795_344_271.999_999_6, 951_782_400.5] {
            let date = Date(timeIntervalSince1970: seconds)
            let text = ISO8601.format(date)
            let read = try #require(ISO8601.parse(text), "\(text)")
            #expect(abs(read.timeIntervalSince1970 - seconds) < 0.000_001, "\(text)")
            #expect(ISO8601.format(read) == text)
        }
        #expect(ISO8601.format(Date(timeIntervalSince1970: 1_795_344_271.018575)) == "2026-11-22T10:44:31.018575Z")
    }

    @Test func anyFractionAnyOffsetAndLocalTimesAreRead() throws {
        let utc = try #require(ISO8601.parse("2026-11-22T10:44:31Z"))
        #expect(ISO8601.parse("2026-11-22T11:44:31+01:00") == utc)
        #expect(ISO8601.parse("2026-11-22T10:44:31.5Z") == utc.addingTimeInterval(0.5))
        #expect(ISO8601.parse("2026-11-22T10:44:31.018575123Z").map { ISO8601.format($0) } == "2026-11-22T10:44:31.018575Z")
        #expect(ISO8601.parse("2026-11-22 10:44:31") != nil)
        #expect(ISO8601.parse("yesterday") == nil)
        #expect(ISO8601.parse("2026-11-22T10:44:31.Z") == nil)
    }
}

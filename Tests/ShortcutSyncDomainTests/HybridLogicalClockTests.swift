import Testing
import ShortcutSyncDomain

/// The hybrid logical clock: it follows physical time, never goes back, and moves past the clocks it receives.
@Suite struct HybridLogicalClockTests {
    @Test func tickFollowsPhysicalTimeAndNeverGoesBack() {
        var clock = HybridLogicalClock()
        #expect(clock.tick(physicalMillis: 100) == HLCTimestamp(wallMillis: 100, counter: 0))
        #expect(clock.tick(physicalMillis: 100) == HLCTimestamp(wallMillis: 100, counter: 1))
        #expect(clock.tick(physicalMillis: 90) == HLCTimestamp(wallMillis: 100, counter: 2))
        #expect(clock.tick(physicalMillis: 120) == HLCTimestamp(wallMillis: 120, counter: 0))
    }

    @Test func receivingAClockAheadMovesLaterEventsPastIt() {
        var clock = HybridLogicalClock()
        _ = clock.tick(physicalMillis: 100)
        let remote = HLCTimestamp(wallMillis: 500, counter: 3)
        clock.receive(remote, physicalMillis: 110)
        #expect(clock.tick(physicalMillis: 120) > remote)
    }

    /// A service (or a device) that sent the greatest counter cannot make the clock trap: past
    /// the counter's bound the clock moves on by a millisecond, and still never goes back.
    @Test func countersAtTheirBoundMoveTheWallClockInsteadOfOverflowing() {
        var clock = HybridLogicalClock()
        let edge = HLCTimestamp(wallMillis: 500, counter: HybridLogicalClock.maxCounter)
        clock.receive(edge, physicalMillis: 100)
        #expect(clock.last == HLCTimestamp(wallMillis: 501, counter: 0))
        #expect(clock.last > edge)

        var hostile = HybridLogicalClock()
        hostile.receive(HLCTimestamp(wallMillis: 700, counter: .max), physicalMillis: 100)
        #expect(hostile.last == HLCTimestamp(wallMillis: 701, counter: 0))
        hostile.receive(HLCTimestamp(wallMillis: 701, counter: -5), physicalMillis: 100)
        #expect(hostile.last == HLCTimestamp(wallMillis: 701, counter: 1))

        var ticking = HybridLogicalClock(last: HLCTimestamp(wallMillis: 900, counter: HybridLogicalClock.maxCounter))
        #expect(ticking.tick(physicalMillis: 0) == HLCTimestamp(wallMillis: 901, counter: 0))

        var atTheEnd = HybridLogicalClock(last: HLCTimestamp(wallMillis: .max, counter: HybridLogicalClock.maxCounter))
        #expect(atTheEnd.tick(physicalMillis: 0) == HLCTimestamp(wallMillis: .max, counter: HybridLogicalClock.maxCounter))
        atTheEnd.receive(HLCTimestamp(wallMillis: .max, counter: .max), physicalMillis: .max)
        #expect(atTheEnd.last == HLCTimestamp(wallMillis: .max, counter: HybridLogicalClock.maxCounter))
    }
}

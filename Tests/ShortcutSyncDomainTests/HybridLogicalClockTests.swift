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
}

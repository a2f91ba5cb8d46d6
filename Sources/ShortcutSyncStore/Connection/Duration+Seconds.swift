extension Duration {
    /// The duration in seconds, fractions included: for rates and reports.
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in whole milliseconds: for PostgreSQL settings and intervals.
    var inMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }

    /// The duration in whole nanoseconds, at most Int64's: for NIO's timers.
    var inNanoseconds: Int64 {
        let (seconds, overflow) = components.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : seconds.addingReportingOverflow(components.attoseconds / 1_000_000_000).partialValue
    }
}

extension Duration {
    /// The duration in seconds, fractions included: for rates and reports.
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in whole milliseconds: for PostgreSQL settings and intervals.
    var inMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}

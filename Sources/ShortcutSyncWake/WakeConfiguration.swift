/// When the waker wakes a device (DESIGN §6): a few seconds after a change it did not pull, at
/// most once per interval, and how it retries what APNs could not take.
public struct WakeConfiguration: Sendable {
    /// How long after a change a device that has not pulled it is woken: a device with an open
    /// stream pulls within milliseconds and is not woken.
    public var delay: Duration = .seconds(3)
    /// At most one wake per device in this interval (DESIGN §6: 20 minutes).
    public var interval: Duration = .seconds(20 * 60)
    /// How often the waker looks for wakes due (besides when it schedules one).
    public var pollInterval: Duration = .seconds(1)
    /// The first pause after a `429` or `5xx`; it doubles with each failure in a row, up to `interval`.
    public var retryBackoff: Duration = .seconds(5)
    /// How many wakes one waker sends at once.
    public var concurrentSends = 16
    /// How long a claimed wake is a waker's alone: if it has not recorded APNs' answer by then
    /// (it stopped, or died), the wake is due again for any waker. Longer than a request may take.
    public var lease: Duration = .seconds(60)
    /// How often the waker looks at every account for devices behind (notifications can be lost).
    public var sweepInterval: Duration = .seconds(60)

    public init() {}

    /// The pause before the next attempt after `failures` retryable refusals in a row.
    func backoff(afterFailures failures: Int) -> Duration {
        let doublings = min(max(failures - 1, 0), 20)
        let pause = retryBackoff * (1 << doublings)
        return min(pause, interval)
    }
}

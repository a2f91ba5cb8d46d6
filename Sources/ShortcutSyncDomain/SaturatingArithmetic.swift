/// Arithmetic that never traps, for values a client or a server sent (DESIGN §5: a crash drops
/// every account's streams and pushes at once, so no client's number may cause one).
extension FixedWidthInteger {
    /// `self + other`, held at `.max` or `.min` instead of overflowing.
    public func addingSaturating(_ other: Self) -> Self {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }

    /// `self - other`, held at `.max` or `.min` instead of overflowing.
    public func subtractingSaturating(_ other: Self) -> Self {
        let (difference, overflow) = subtractingReportingOverflow(other)
        guard overflow else { return difference }
        return other > 0 ? .min : .max
    }
}

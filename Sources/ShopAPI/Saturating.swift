/// Numbers from the server are untrusted: a balance or a total near `Int.max` must not trap the
/// arithmetic that judges it. These stop at the ends of `Int` instead of overflowing (a figure that far
/// out is already the finding).
extension Int {
    public func plusSaturating(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    public func minusSaturating(_ other: Int) -> Int {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : difference
    }
}

extension Sequence where Element == Int {
    /// The sum, saturating.
    public func saturatingSum() -> Int { reduce(0) { $0.plusSaturating($1) } }
}

extension Int {
    /// ⌈self / divisor⌉ for a positive divisor, without the `self + divisor − 1` that overflows near `Int.max`.
    public func dividedRoundingUp(by divisor: Int) -> Int {
        let (quotient, remainder) = quotientAndRemainder(dividingBy: divisor)
        return remainder > 0 ? quotient + 1 : quotient
    }
}

extension Int {
    /// The product, saturating.
    public func timesSaturating(_ other: Int) -> Int {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? ((self < 0) == (other < 0) ? .max : .min) : product
    }
}

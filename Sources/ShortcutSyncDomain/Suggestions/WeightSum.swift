import Foundation

/// A non-negative integer of any size (64-bit limbs, least significant first): the exact sum of
/// donation weights. Integers add and subtract exactly in any order, so the sums of a set of
/// donations are equal bit for bit however they arrived, in the push's fold, the maintenance
/// fold and a rebuild alike (floating-point sums would differ in their last bits).
public struct WeightSum: Sendable, Hashable {
    /// No trailing zero limb: equal values have equal limbs.
    public private(set) var limbs: [UInt64]

    public init() { limbs = [] }

    public init(limbs: [UInt64]) {
        self.limbs = limbs
        trim()
    }

    /// `value << shift`.
    public init(_ value: UInt64, shiftedLeftBy shift: Int) {
        let words = shift / 64, bits = shift % 64
        var limbs = [UInt64](repeating: 0, count: words)
        limbs.append(value << UInt64(bits))
        if bits > 0 { limbs.append(value >> UInt64(64 - bits)) }
        self.init(limbs: limbs)
    }

    public var isZero: Bool { limbs.isEmpty }

    public mutating func add(_ other: WeightSum) {
        if limbs.count < other.limbs.count { limbs.append(contentsOf: repeatElement(0, count: other.limbs.count - limbs.count)) }
        var carry: UInt64 = 0
        for index in limbs.indices {
            let (a, o1) = limbs[index].addingReportingOverflow(index < other.limbs.count ? other.limbs[index] : 0)
            let (b, o2) = a.addingReportingOverflow(carry)
            limbs[index] = b
            carry = (o1 ? 1 : 0) + (o2 ? 1 : 0)
            if carry == 0 && index >= other.limbs.count { break }
        }
        if carry > 0 { limbs.append(carry) }
    }

    /// Takes back `other`, which was added before; were it larger (it never is), the result is zero.
    public mutating func subtract(_ other: WeightSum) {
        guard other <= self else { self = WeightSum(); return }
        var borrow: UInt64 = 0
        for index in limbs.indices {
            let (a, o1) = limbs[index].subtractingReportingOverflow(index < other.limbs.count ? other.limbs[index] : 0)
            let (b, o2) = a.subtractingReportingOverflow(borrow)
            limbs[index] = b
            borrow = (o1 ? 1 : 0) + (o2 ? 1 : 0)
            if borrow == 0 && index >= other.limbs.count { break }
        }
        trim()
    }

    static func <= (lhs: WeightSum, rhs: WeightSum) -> Bool {
        if lhs.limbs.count != rhs.limbs.count { return lhs.limbs.count < rhs.limbs.count }
        for index in lhs.limbs.indices.reversed() where lhs.limbs[index] != rhs.limbs[index] {
            return lhs.limbs[index] < rhs.limbs[index]
        }
        return true
    }

    /// The value as a `Double` times 2^`exponent` (rounded; for scoring only).
    public func doubleValue(timesTwoToThe exponent: Int) -> Double {
        var value = 0.0
        for (index, limb) in limbs.enumerated() where limb != 0 {
            value += scalbn(Double(limb), 64 * index + exponent)
        }
        return value
    }

    private mutating func trim() {
        while limbs.last == 0 { limbs.removeLast() }
    }
}

/// SplitMix64: a tiny, fast, seedable generator. The same seed gives the same shop on every machine.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(state)
    }

    /// A well-mixed 64-bit value from any 64-bit input (the SplitMix64 finalizer).
    public static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A generator for item `index` of stream `stream`, independent of every other item:
    /// lets the whale's history generate entry N without generating entries 0..<N.
    public static func forItem(seed: UInt64, stream: UInt64, index: UInt64) -> SeededGenerator {
        SeededGenerator(seed: mix(seed ^ mix(stream &+ mix(index))))
    }

    public mutating func pick<T>(_ items: [T]) -> T {
        items[Int(next() % UInt64(items.count))]
    }

    public mutating func int(in range: ClosedRange<Int>) -> Int {
        let span = UInt64(range.upperBound - range.lowerBound) + 1
        return range.lowerBound + Int(next() % span)
    }

    /// true with probability `p`.
    public mutating func chance(_ p: Double) -> Bool {
        Double(next() >> 11) / Double(UInt64(1) << 53) < p
    }
}

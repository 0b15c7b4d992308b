import Foundation
import Synchronization

/// Makes the `id` of every new request: a version-4 `UUID`, unique within the process.
///
/// `UUID()` on Linux opens, reads and closes `/dev/urandom` each time, a tenth of the CPU of a
/// request answered from the cache. An identifier names a request; it is no secret. So the
/// randomness is drawn once, and each identifier mixes it with a counter: the low half is the
/// counter offset by a random value (distinct for 2^62 requests), the high half the counter
/// scrambled by a bijection (random-looking), and the version and variant bits are set as in
/// any version-4 UUID.
enum RequestIdentifiers {
    private static let seed: (high: UInt64, low: UInt64) = {
        var generator = SystemRandomNumberGenerator()
        return (generator.next(), generator.next())
    }()

    private static let counter = Atomic<UInt64>(0)

    /// The next identifier.
    static func next() -> UUID {
        let count = counter.wrappingAdd(1, ordering: .relaxed).newValue
        let high = scrambled(count ^ seed.high)
        let low = count &+ seed.low
        // Version 4 in the high nibble of byte 6; variant 0b10 in the top bits of byte 8.
        let versioned = (high & ~0xF000) | 0x4000
        let varied = (low & ~(0b11 << 62)) | (0b10 << 62)
        return UUID(uuid: (
            UInt8(truncatingIfNeeded: versioned >> 56), UInt8(truncatingIfNeeded: versioned >> 48),
            UInt8(truncatingIfNeeded: versioned >> 40), UInt8(truncatingIfNeeded: versioned >> 32),
            UInt8(truncatingIfNeeded: versioned >> 24), UInt8(truncatingIfNeeded: versioned >> 16),
            UInt8(truncatingIfNeeded: versioned >> 8), UInt8(truncatingIfNeeded: versioned),
            UInt8(truncatingIfNeeded: varied >> 56), UInt8(truncatingIfNeeded: varied >> 48),
            UInt8(truncatingIfNeeded: varied >> 40), UInt8(truncatingIfNeeded: varied >> 32),
            UInt8(truncatingIfNeeded: varied >> 24), UInt8(truncatingIfNeeded: varied >> 16),
            UInt8(truncatingIfNeeded: varied >> 8), UInt8(truncatingIfNeeded: varied)
        ))
    }

    /// A bijection of 64-bit values that spreads every input bit over the output (the finalizer
    /// of SplitMix64).
    private static func scrambled(_ value: UInt64) -> UInt64 {
        var mixed = value
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

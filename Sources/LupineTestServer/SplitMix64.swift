import NIOCore

/// The SplitMix64 generator (Steele, Lea & Flood, 2014), the byte source of `/bytes/N?seed=S`.
///
/// The state starts at the seed; each step adds 0x9E3779B97F4A7C15 and mixes the state into a
/// 64-bit output. The byte stream is every output's 8 bytes in little-endian order, so a body of
/// N bytes is the first N bytes of that stream, and equal (N, seed) always give equal bodies.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    /// Moves past `count` outputs (8 bytes each) without computing them.
    mutating func skip(outputs count: UInt64) {
        state &+= 0x9E37_79B9_7F4A_7C15 &* count
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// Appends the next `count` bytes of the stream. Only the last call of a stream may pass
    /// a count that is not a multiple of 8, because the tail of that output is dropped.
    mutating func fill(_ buffer: inout ByteBuffer, count: Int) {
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { raw in
            var offset = 0
            while offset + 8 <= count {
                raw.storeBytes(of: next().littleEndian, toByteOffset: offset, as: UInt64.self)
                offset += 8
            }
            if offset < count {
                let tail = next().littleEndian
                withUnsafeBytes(of: tail) { tailBytes in
                    for position in 0..<(count - offset) {
                        raw[offset + position] = tailBytes[position]
                    }
                }
            }
            return count
        }
    }
}

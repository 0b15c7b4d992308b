import Foundation

/// Reads typed values off the front of a fuzzer's input, so one byte string drives a structured
/// test case. Reading past the end yields zeros and empty values, never a trap.
public struct FuzzInput {
    private let bytes: [UInt8]
    private var position = 0

    /// Wraps the buffer libFuzzer hands to `LLVMFuzzerTestOneInput`.
    public init(_ start: UnsafePointer<UInt8>?, _ count: Int) {
        if let start, count > 0 {
            bytes = Array(UnsafeBufferPointer(start: start, count: count))
        } else {
            bytes = []
        }
    }

    /// Whether every byte has been read.
    public var isExhausted: Bool { position >= bytes.count }

    /// The next byte, or 0 at the end.
    public mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// A Bool from the low bit of the next byte.
    public mutating func bool() -> Bool { byte() & 1 == 1 }

    /// The next `count` bytes at most.
    public mutating func bytes(upTo count: Int) -> [UInt8] {
        let end = min(bytes.count, position + max(0, count))
        defer { position = end }
        return Array(bytes[position..<end])
    }

    /// A length-prefixed byte string (the prefix byte caps it at 255 bytes).
    public mutating func chunk() -> [UInt8] { bytes(upTo: Int(byte())) }

    /// A length-prefixed string, invalid UTF-8 repaired.
    public mutating func string() -> String { String(decoding: chunk(), as: UTF8.self) }

    /// Everything not read yet.
    public mutating func rest() -> [UInt8] { bytes(upTo: bytes.count) }
}

/// Stops the run with a message when a property the target checks does not hold: libFuzzer then
/// saves the input as a crash artefact.
public func fuzzRequire(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    guard condition() else {
        FileHandle.standardError.write(Data("fuzz property failed: \(message())\n".utf8))
        abort()
    }
}

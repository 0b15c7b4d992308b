import CLupineCodecs
import NIOCore

/// Incremental brotli (RFC 7932) compression through libbrotlienc, loaded at run time (see
/// CLupineCodecs).
final class BrotliCompressor: StreamCompressor {
    struct Failure: Error {}

    private let encoder: OpaquePointer

    /// - Parameters:
    ///   - quality: 0 (fastest) to 11 (smallest).
    ///   - windowBits: The window, 10 to 24 bits.
    /// - Throws: `Failure` when libbrotlienc is missing or refuses the settings.
    init(quality: UInt32 = 5, windowBits: UInt32 = 22) throws {
        guard let encoder = clupine_brotli_encoder_create(quality, windowBits) else { throw Failure() }
        self.encoder = encoder
    }

    deinit {
        clupine_brotli_encoder_destroy(encoder)
    }

    func compress(_ input: UnsafeRawBufferPointer, into output: inout ByteBuffer) throws {
        try run(input, operation: CLUPINE_BROTLI_ENCODER_PROCESS, into: &output)
    }

    func finish(into output: inout ByteBuffer) throws {
        try run(UnsafeRawBufferPointer(start: nil, count: 0), operation: CLUPINE_BROTLI_ENCODER_FINISH, into: &output)
    }

    private func run(_ input: UnsafeRawBufferPointer, operation: clupine_brotli_encoder_operation, into output: inout ByteBuffer) throws {
        let empty: UInt8 = 0
        try withUnsafePointer(to: empty) { emptyInput in
            var nextIn: UnsafePointer<UInt8>? = input.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? emptyInput
            var availableIn = input.count
            while true {
                var succeeded = true
                output.writeWithUnsafeMutableBytes(minimumWritableBytes: 16 * 1024) { space in
                    var nextOut = space.baseAddress?.assumingMemoryBound(to: UInt8.self)
                    var availableOut = space.count
                    succeeded = clupine_brotli_encoder_compress(encoder, operation, &availableIn, &nextIn, &availableOut, &nextOut) != 0
                    return space.count - availableOut
                }
                guard succeeded else { throw Failure() }
                let pending = clupine_brotli_encoder_has_more_output(encoder) != 0
                if operation == CLUPINE_BROTLI_ENCODER_FINISH {
                    if clupine_brotli_encoder_is_finished(encoder) != 0 { return }
                } else if availableIn == 0, !pending {
                    return
                }
            }
        }
    }
}

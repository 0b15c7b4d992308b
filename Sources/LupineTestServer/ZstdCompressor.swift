import CLupineCodecs
import NIOCore

/// Incremental zstd (RFC 8878) compression through libzstd, loaded at run time (see
/// CLupineCodecs). Each body is one frame with a content checksum.
final class ZstdCompressor: StreamCompressor {
    struct Failure: Error {
        let reason: String
    }

    private let encoder: OpaquePointer

    /// - Parameters:
    ///   - level: 1 (fastest) to 19 (smallest) for ordinary use.
    ///   - windowLog: The window, in bits; 0 for the level's own.
    /// - Throws: `Failure` when libzstd is missing or refuses the settings.
    init(level: Int32 = 3, windowLog: Int32 = 0) throws {
        guard let encoder = clupine_zstd_encoder_create(level, windowLog, 1) else { throw Failure(reason: "no zstd encoder") }
        self.encoder = encoder
    }

    deinit {
        clupine_zstd_encoder_destroy(encoder)
    }

    func compress(_ input: UnsafeRawBufferPointer, into output: inout ByteBuffer) throws {
        try run(input, end: false, into: &output)
    }

    func finish(into output: inout ByteBuffer) throws {
        try run(UnsafeRawBufferPointer(start: nil, count: 0), end: true, into: &output)
    }

    private func run(_ input: UnsafeRawBufferPointer, end: Bool, into output: inout ByteBuffer) throws {
        var source = clupine_zstd_input(src: input.baseAddress, size: input.count, pos: 0)
        while true {
            var remaining = 0
            output.writeWithUnsafeMutableBytes(minimumWritableBytes: 16 * 1024) { space in
                var destination = clupine_zstd_output(dst: space.baseAddress, size: space.count, pos: 0)
                remaining = clupine_zstd_compress(encoder, &destination, &source, end ? 1 : 0)
                return destination.pos
            }
            if clupine_zstd_is_error(remaining) != 0 {
                throw Failure(reason: String(cString: clupine_zstd_error_name(remaining)))
            }
            // ZSTD_e_end: done when nothing is left to flush; ZSTD_e_continue: when the input is taken.
            if end ? remaining == 0 : source.pos == source.size { return }
        }
    }
}

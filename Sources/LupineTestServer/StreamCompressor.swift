import NIOCore

/// An incremental compressor of one body: zlib (gzip, deflate), brotli or zstd.
protocol StreamCompressor: AnyObject {
    /// Compresses `input`, appending whatever output is ready to `output`.
    func compress(_ input: UnsafeRawBufferPointer, into output: inout ByteBuffer) throws
    /// Writes the rest of the output and ends the stream.
    func finish(into output: inout ByteBuffer) throws
}

extension StreamCompressor {
    /// Compresses all of `input` and ends the stream.
    func compressWhole(_ input: ByteBuffer) throws -> ByteBuffer {
        var output = ByteBuffer()
        try input.withUnsafeReadableBytes { try compress($0, into: &output) }
        try finish(into: &output)
        return output
    }
}

extension ZlibCompressor: StreamCompressor {}

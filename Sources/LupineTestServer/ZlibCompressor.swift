import CLupineZlib
import NIOCore

/// Incremental deflate through zlib, producing a gzip (RFC 1952) or zlib (RFC 1950) stream.
///
/// The `z_stream` lives at a fixed heap address because zlib keeps a pointer back to it
/// and rejects calls made with a moved copy.
final class ZlibCompressor {
    enum Format {
        case gzip
        case zlib

        fileprivate var windowBits: Int32 {
            switch self {
            case .gzip: return 15 + 16
            case .zlib: return 15
            }
        }
    }

    struct Failure: Error {
        let code: Int32
    }

    private let stream: UnsafeMutablePointer<z_stream>

    init(format: Format, level: Int32 = Z_DEFAULT_COMPRESSION, strategy: Int32 = Z_DEFAULT_STRATEGY) throws {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let code = clupine_deflate_init(stream, level, format.windowBits, strategy)
        guard code == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw Failure(code: code)
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Compresses `input`, appending whatever output zlib has ready to `output`.
    func compress(_ input: UnsafeRawBufferPointer, into output: inout ByteBuffer) throws {
        try run(input, flush: Z_NO_FLUSH, into: &output)
    }

    /// Flushes the remaining output and the stream trailer.
    func finish(into output: inout ByteBuffer) throws {
        try run(UnsafeRawBufferPointer(start: nil, count: 0), flush: Z_FINISH, into: &output)
    }

    /// Compresses a whole buffer in one go.
    static func compress(_ input: ByteBuffer, format: Format) throws -> ByteBuffer {
        let compressor = try ZlibCompressor(format: format)
        var output = ByteBuffer()
        try input.withUnsafeReadableBytes { try compressor.compress($0, into: &output) }
        try compressor.finish(into: &output)
        return output
    }

    private func run(_ input: UnsafeRawBufferPointer, flush: Int32, into output: inout ByteBuffer) throws {
        // zlib counts in 32-bit units; callers hand over modest chunks, larger input is split.
        guard input.count <= Int(UInt32.max) else {
            let half = input.count / 2
            try run(UnsafeRawBufferPointer(rebasing: input[..<half]), flush: Z_NO_FLUSH, into: &output)
            try run(UnsafeRawBufferPointer(rebasing: input[half...]), flush: flush, into: &output)
            return
        }
        let stream = self.stream
        stream.pointee.next_in = input.baseAddress.map {
            UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self))
        }
        stream.pointee.avail_in = uInt(input.count)
        while true {
            var code = Z_OK
            output.writeWithUnsafeMutableBytes(minimumWritableBytes: 16 * 1024) { space in
                let usable = min(space.count, Int(UInt32.max))
                stream.pointee.next_out = space.baseAddress?.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(usable)
                code = deflate(stream, flush)
                return usable - Int(stream.pointee.avail_out)
            }
            switch code {
            case Z_STREAM_END:
                return
            case Z_OK, Z_BUF_ERROR:
                // With Z_NO_FLUSH, spare output space means all input was consumed.
                if flush != Z_FINISH && stream.pointee.avail_out != 0 {
                    return
                }
            default:
                throw Failure(code: code)
            }
        }
    }
}

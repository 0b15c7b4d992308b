import CLupineZlib
import NIOCore

/// One-shot inflation of a zlib (RFC 1950) stream, checking its header and Adler-32 trailer.
enum ZlibInflater {
    struct Failure: Error {
        let code: Int32
    }

    /// The inflated bytes of `input`; fails on a corrupt or truncated stream, or when the result
    /// would pass `limit` bytes.
    static func inflate(_ input: ByteBuffer, limit: Int = 64 * 1024 * 1024) throws -> ByteBuffer {
        let compressed = Array(input.readableBytesView)
        var capacity = max(1024, compressed.count * 4)
        while true {
            var output = [UInt8](repeating: 0, count: capacity)
            var outputCount = uLong(capacity)
            let code = output.withUnsafeMutableBufferPointer { outputBytes in
                compressed.withUnsafeBufferPointer { inputBytes in
                    uncompress(outputBytes.baseAddress, &outputCount, inputBytes.baseAddress, uLong(inputBytes.count))
                }
            }
            switch code {
            case Z_OK:
                return ByteBuffer(bytes: output[..<Int(outputCount)])
            case Z_BUF_ERROR where capacity < limit:
                // Either the output did not fit or the input is truncated; a larger buffer tells.
                capacity = min(limit, capacity * 4)
            default:
                throw Failure(code: code)
            }
        }
    }
}

import CLupineZlib
import Foundation
import NIOCore
import NIOHTTPCompression

/// Decodes a response body sent with `Content-Encoding: gzip` or `deflate`, part by part, as the
/// exchange delivers it, and refuses a body that inflates beyond a ratio of what was received (a
/// decompression bomb).
///
/// The exchange handler runs it only for a response that declares one of these encodings: a
/// pipeline stage in front of the handler would be crossed by every part of every response,
/// encoded or not. Errors are SwiftNIO's decompression errors, which the engine reports as
/// `URLError(.cannotDecodeContentData)`.
final class ResponseBodyInflater {
    /// Output is produced in chunks of this size.
    private static let chunkSize = 16_384
    /// zlib's window of 2^15 bytes, plus 32: a zlib or a gzip header, detected (what SwiftNIO's
    /// decompressor accepts for both encodings).
    private static let windowBits: Int32 = 15 + 32

    private let ratioLimit: Int
    /// zlib keeps a pointer back to its stream: the stream lives at one address for its life.
    private let stream: UnsafeMutablePointer<z_stream>
    /// Where zlib writes, one chunk at a time; made once per response, not per received part.
    private let chunk: UnsafeMutablePointer<Bytef>
    private var receivedBytes = 0
    private var inflatedBytes = 0
    private var isComplete = false

    /// An inflater for a response whose `Content-Encoding` is `contentEncoding`, or nil when that
    /// is not an encoding the engine decodes (the body is then delivered as received).
    ///
    /// - Throws: `NIOHTTPDecompression.DecompressionError.initializationError` if zlib cannot start.
    static func make(contentEncoding: String?, ratioLimit: Int) throws -> ResponseBodyInflater? {
        guard let contentEncoding, isDecoded(contentEncoding) else { return nil }
        return try ResponseBodyInflater(ratioLimit: ratioLimit)
    }

    /// Whether the first coding listed is gzip or deflate (the codings SwiftNIO decodes).
    static func isDecoded(_ contentEncoding: String) -> Bool {
        let first = contentEncoding.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let coding = first.lupineTrimmingASCIIWhitespace()
        return coding.lupineEqualsIgnoringASCIICase("gzip") || coding.lupineEqualsIgnoringASCIICase("deflate")
    }

    private init(ratioLimit: Int) throws {
        self.ratioLimit = ratioLimit
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        chunk = .allocate(capacity: Self.chunkSize)
        let code = clupine_inflate_init(stream, Self.windowBits)
        guard code == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            chunk.deallocate()
            throw NIOHTTPDecompression.DecompressionError.initializationError(Int(code))
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        chunk.deallocate()
    }

    /// The decoded bytes of one received part of the body (possibly none yet).
    ///
    /// - Throws: `DecompressionError.limit` past the ratio limit, `.inflationError` for bytes that
    ///   are not a valid stream, `ExtraDecompressionError.invalidTrailingData` for bytes after its end.
    func inflate(_ part: ByteBuffer) throws -> Data {
        guard part.readableBytes > 0 else { return Data() }
        guard !isComplete else { throw NIOHTTPDecompression.ExtraDecompressionError.invalidTrailingData }
        receivedBytes += part.readableBytes
        var output = Data()
        try part.withUnsafeReadableBytes { input in
            guard let base = input.baseAddress else { return }
            stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(input.count)
            defer {
                stream.pointee.next_in = nil
                stream.pointee.avail_in = 0
            }
            while true {
                stream.pointee.next_out = chunk
                stream.pointee.avail_out = uInt(Self.chunkSize)
                let code = CLupineZlib.inflate(stream, Z_NO_FLUSH)
                let produced = Self.chunkSize - Int(stream.pointee.avail_out)
                stream.pointee.next_out = nil
                stream.pointee.avail_out = 0
                if produced > 0 {
                    output.append(chunk, count: produced)
                    inflatedBytes += produced
                    if inflatedBytes > receivedBytes * ratioLimit {
                        throw NIOHTTPDecompression.DecompressionError.limit
                    }
                }
                switch code {
                case Z_STREAM_END:
                    isComplete = true
                    if stream.pointee.avail_in > 0 { throw NIOHTTPDecompression.ExtraDecompressionError.invalidTrailingData }
                    return
                case Z_OK:
                    // More output may be pending while the chunk was filled; otherwise the input
                    // is used up and the next part carries on.
                    if stream.pointee.avail_in == 0, produced < Self.chunkSize { return }
                case Z_BUF_ERROR:
                    // No progress possible: the input is used up.
                    return
                default:
                    throw NIOHTTPDecompression.DecompressionError.inflationError(Int(code))
                }
            }
        }
        return output
    }

    /// The body ended: a stream that began and did not reach its end was cut short. A body with
    /// no bytes at all (a HEAD response, a 204 or 304 that names an encoding) is no stream.
    ///
    /// - Throws: `ExtraDecompressionError.truncatedData`.
    func finish() throws {
        guard receivedBytes > 0, !isComplete else { return }
        throw NIOHTTPDecompression.ExtraDecompressionError.truncatedData
    }
}

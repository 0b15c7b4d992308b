import CLupineZlib

extension ContentCoding {
    /// gzip (RFC 1952), also named `x-gzip`.
    static let gzip = ContentCoding(token: "gzip", aliases: ["x-gzip"]) { () throws(ContentDecodingError) in
        try ZlibContentDecoder(coding: "gzip")
    }

    /// deflate: a zlib stream (RFC 1950) of deflate data (RFC 1951).
    static let deflate = ContentCoding(token: "deflate") { () throws(ContentDecodingError) in
        try ZlibContentDecoder(coding: "deflate")
    }
}

/// Decodes gzip and deflate bodies through the system zlib.
///
/// Either coding accepts a zlib or a gzip header, found from the first bytes, as SwiftNIO's
/// decompressor did: a server that labels one as the other is still understood. One stream per
/// body: a second gzip member after the first is trailing data.
final class ZlibContentDecoder: ContentDecoder {
    /// zlib's window of 2^15 bytes, plus 32: detect a zlib or a gzip header.
    private static let windowBits: Int32 = 15 + 32

    private let coding: String
    /// zlib keeps a pointer back to its stream: the stream lives at one address for its life.
    private let stream: UnsafeMutablePointer<z_stream>

    /// - Parameter coding: The token errors name.
    /// - Throws: ``ContentDecodingError/decoderUnavailable(coding:)`` when zlib cannot start.
    init(coding: String) throws(ContentDecodingError) {
        self.coding = coding
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        guard clupine_inflate_init(stream, Self.windowBits) == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw .decoderUnavailable(coding: coding)
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    func decode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(ContentDecodingError)
        -> ContentDecoderStep {
        // zlib counts in 32 bits; what is not taken now is offered again by the caller.
        let offered = min(input.count, Int(UInt32.max))
        let room = min(output.count, Int(UInt32.max))
        stream.pointee.next_in = input.baseAddress.map { UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self)) }
        stream.pointee.avail_in = uInt(offered)
        stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(room)
        let code = inflate(stream, Z_NO_FLUSH)
        let step = { (boundary: ContentDecoderStep.Boundary) in
            ContentDecoderStep(consumed: offered - Int(self.stream.pointee.avail_in),
                               produced: room - Int(self.stream.pointee.avail_out), boundary: boundary)
        }
        defer {
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
            stream.pointee.next_out = nil
            stream.pointee.avail_out = 0
        }
        switch code {
        case Z_STREAM_END:
            return step(.endOfStream)
        case Z_OK, Z_BUF_ERROR:
            // Z_BUF_ERROR: no progress was possible, for want of input (or of room, which the
            // caller gives again).
            return step(.inside)
        default:
            let reason = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(code)"
            throw .invalidData(coding: coding, reason: reason)
        }
    }
}

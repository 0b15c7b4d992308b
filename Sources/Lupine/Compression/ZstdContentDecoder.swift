import CLupineCodecs

extension ContentCoding {
    /// Zstandard (RFC 8878), through libzstd, loaded at run time.
    static let zstd = ContentCoding(token: "zstd", isAvailable: clupine_zstd_available() != 0) {
        () throws(ContentDecodingError) in
        try ZstdContentDecoder()
    }
}

/// Decodes zstd bodies through libzstd (opened with dlopen by CLupineCodecs: building Lupine
/// needs no zstd headers).
///
/// A body may hold several frames, skippable ones included (RFC 8878, section 3.1); it may end
/// after any whole frame. A frame whose window is over 8 MiB is refused: RFC 9659 limits the
/// window of the zstd content coding to 8 MiB, so that a response cannot make the client hold a
/// window of up to 128 MiB (libzstd's own limit) for it.
final class ZstdContentDecoder: ContentDecoder {
    /// 2^23 bytes: 8 MiB (RFC 9659).
    static let windowLogMax: Int32 = 23

    private let context: OpaquePointer

    /// - Throws: ``ContentDecodingError/decoderUnavailable(coding:)`` when the library is
    ///   missing or cannot make a decoder.
    init() throws(ContentDecodingError) {
        guard let context = clupine_zstd_decoder_create(Self.windowLogMax) else { throw .decoderUnavailable(coding: "zstd") }
        self.context = context
    }

    deinit {
        clupine_zstd_decoder_destroy(context)
    }

    func decode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(ContentDecodingError)
        -> ContentDecoderStep {
        var source = clupine_zstd_input(src: input.baseAddress, size: input.count, pos: 0)
        var destination = clupine_zstd_output(dst: output.baseAddress, size: output.count, pos: 0)
        let code = clupine_zstd_decompress(context, &destination, &source)
        guard clupine_zstd_is_error(code) == 0 else {
            throw .invalidData(coding: "zstd", reason: String(cString: clupine_zstd_error_name(code)))
        }
        // 0: a frame was decoded and all its output written.
        return ContentDecoderStep(consumed: source.pos, produced: destination.pos, boundary: code == 0 ? .endOfFrame : .inside)
    }
}

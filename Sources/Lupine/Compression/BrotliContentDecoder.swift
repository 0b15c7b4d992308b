import CLupineCodecs

extension ContentCoding {
    /// Brotli (RFC 7932), through libbrotlidec, loaded at run time.
    static let brotli = ContentCoding(token: "br", isAvailable: clupine_brotli_decoder_available() != 0) {
        () throws(ContentDecodingError) in
        try BrotliContentDecoder()
    }
}

/// Decodes brotli bodies through libbrotlidec (opened with dlopen by CLupineCodecs: building
/// Lupine needs no brotli headers).
///
/// The window is the standard one, at most 16 MiB; large-window brotli, which is not a content
/// coding, is refused.
final class BrotliContentDecoder: ContentDecoder {
    private let state: OpaquePointer

    /// - Throws: ``ContentDecodingError/decoderUnavailable(coding:)`` when the library is
    ///   missing or cannot make a decoder.
    init() throws(ContentDecodingError) {
        guard let state = clupine_brotli_decoder_create() else { throw .decoderUnavailable(coding: "br") }
        self.state = state
    }

    deinit {
        clupine_brotli_decoder_destroy(state)
    }

    func decode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(ContentDecodingError)
        -> ContentDecoderStep {
        guard let outputStart = output.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            return ContentDecoderStep(consumed: 0, produced: 0, boundary: .inside)
        }
        // An empty input still gets a valid address: the library's arguments are never null.
        let empty: UInt8 = 0
        return try withUnsafePointer(to: empty) { emptyInput -> Result<ContentDecoderStep, ContentDecodingError> in
            var nextIn: UnsafePointer<UInt8>? = input.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? emptyInput
            var availableIn = input.count
            var nextOut: UnsafeMutablePointer<UInt8>? = outputStart
            var availableOut = output.count
            let result = clupine_brotli_decoder_decompress(state, &availableIn, &nextIn, &availableOut, &nextOut)
            let consumed = input.count - availableIn
            let produced = output.count - availableOut
            switch result {
            case CLUPINE_BROTLI_DECODER_SUCCESS:
                return .success(ContentDecoderStep(consumed: consumed, produced: produced, boundary: .endOfStream))
            case CLUPINE_BROTLI_DECODER_NEEDS_MORE_INPUT, CLUPINE_BROTLI_DECODER_NEEDS_MORE_OUTPUT:
                return .success(ContentDecoderStep(consumed: consumed, produced: produced, boundary: .inside))
            default:
                return .failure(.invalidData(coding: "br", reason: String(cString: clupine_brotli_decoder_error(state))))
            }
        }.get()
    }
}

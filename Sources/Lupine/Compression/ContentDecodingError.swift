/// Why a response body could not be decoded.
///
/// The engine reports each case as `URLError(.cannotDecodeContentData)` wrapped in
/// `AFError.sessionTaskFailed`, with ``description`` as the URLError's description, and closes the
/// connection (the rest of the body would be read as the next response).
enum ContentDecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The library that decodes `coding` could not start a decoder.
    case decoderUnavailable(coding: String)
    /// The bytes are not a valid `coding` stream; `reason` is the library's word for why.
    case invalidData(coding: String, reason: String)
    /// The body ended before its `coding` stream did.
    case truncated(coding: String)
    /// Bytes follow the end of the `coding` stream.
    case trailingData(coding: String)
    /// Decoding produced more than `limit` times the bytes received: a decompression bomb.
    case ratioLimitExceeded(limit: Int)
    /// `Content-Encoding` stacks `count` codings, more than the `limit` Lupine undoes.
    case tooManyCodings(count: Int, limit: Int)

    var description: String {
        switch self {
        case let .decoderUnavailable(coding):
            "a \(coding) decoder could not be started"
        case let .invalidData(coding, _):
            // The library's reason stays out: it is the library's text, kept for the debug log.
            "the body is not valid \(coding) data"
        case let .truncated(coding):
            "the body ended before its \(coding) stream did"
        case let .trailingData(coding):
            "bytes follow the end of the body's \(coding) stream"
        case let .ratioLimitExceeded(limit):
            "the body decodes to more than \(limit) times its encoded size (the decompression ratio limit)"
        case let .tooManyCodings(count, limit):
            "Content-Encoding lists \(count) codings; at most \(limit) are decoded"
        }
    }
}

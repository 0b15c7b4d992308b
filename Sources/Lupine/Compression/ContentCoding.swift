/// A content coding Lupine decodes: the token that names it in `Content-Encoding` and
/// `Accept-Encoding`, whether this process can decode it, and how to make a decoder for one
/// response.
///
/// Each decoder's file defines its coding as a static member (``gzip``, ``deflate``, ``brotli``,
/// ``zstd``); ``ContentDecoderRegistry/standard`` lists them in order of preference.
struct ContentCoding: Sendable {
    /// The token in `Accept-Encoding`, lowercase (`br`, `gzip`).
    let token: String
    /// Other tokens a response may use for this coding (`x-gzip`, RFC 9110 section 8.4.1.3).
    let aliases: [String]
    /// Whether the library behind the decoder is in this process. Brotli and zstd are loaded at
    /// run time; a coding that is not available is neither advertised nor decoded.
    let isAvailable: Bool
    /// A decoder for one response body.
    let makeDecoder: @Sendable () throws(ContentDecodingError) -> any ContentDecoder

    /// - Parameters:
    ///   - token: The coding's token, lowercase.
    ///   - aliases: Other tokens that mean the same coding.
    ///   - isAvailable: Whether this process can decode it.
    ///   - makeDecoder: Makes a decoder for one response; throws
    ///     ``ContentDecodingError/decoderUnavailable(coding:)`` when the library cannot start one.
    init(token: String, aliases: [String] = [], isAvailable: Bool = true,
         makeDecoder: @escaping @Sendable () throws(ContentDecodingError) -> any ContentDecoder) {
        self.token = token
        self.aliases = aliases
        self.isAvailable = isAvailable
        self.makeDecoder = makeDecoder
    }

    /// Whether `name`, as a response writes it, names this coding (tokens are case-insensitive).
    func isNamed(_ name: some StringProtocol) -> Bool {
        name.lupineEqualsIgnoringASCIICase(token) || aliases.contains { name.lupineEqualsIgnoringASCIICase($0) }
    }
}

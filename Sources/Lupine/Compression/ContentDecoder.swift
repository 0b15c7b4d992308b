/// The decompressor of one content coding (RFC 9110, section 8.4.1), fed a response body as it
/// arrives.
///
/// A decoder only translates bytes: ``ResponseBodyDecoder`` drives it, undoes stacked codings in
/// turn, bounds what it produces by the decompression ratio limit and checks that its stream ends
/// where the body does. A decoder is made for one response and used from one thread at a time.
///
/// To decode one more coding, add one file that holds a class conforming to this protocol and a
/// ``ContentCoding`` that makes it, then name that coding in ``ContentDecoderRegistry/standard``
/// (the article "Content codings" walks through it).
protocol ContentDecoder: AnyObject {
    /// Decodes from the front of `input` into `output`, as far as either allows.
    ///
    /// The caller calls again with the input not consumed, and again with no input at all while
    /// the last call filled `output` (more may be pending), until a call neither fills `output`
    /// nor leaves input unconsumed.
    ///
    /// - Parameters:
    ///   - input: Encoded bytes; may be empty.
    ///   - output: Where decoded bytes are written, from its start.
    /// - Returns: How many bytes were consumed and produced, and whether a stream or a frame ended.
    /// - Throws: ``ContentDecodingError/invalidData(coding:reason:)`` for bytes that are not this
    ///   coding.
    func decode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(ContentDecodingError)
        -> ContentDecoderStep
}

/// What one call of ``ContentDecoder/decode(_:into:)`` did.
struct ContentDecoderStep: Equatable {
    /// Where the encoded stream stands after the call.
    enum Boundary: Equatable {
        /// Inside the stream: the body may not end here.
        case inside
        /// A frame ended and its output was all written: the body may end here, or another frame
        /// may follow (zstd).
        case endOfFrame
        /// The stream ended and its output was all written: nothing may follow (gzip, deflate, br).
        case endOfStream
    }

    /// Input bytes used.
    var consumed: Int
    /// Output bytes written.
    var produced: Int
    /// Where the stream stands.
    var boundary: Boundary
}

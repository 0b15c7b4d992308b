import NIOHTTP1

/// The content codings Lupine decodes, in order of preference: the one list that both the
/// response decoder and the `Accept-Encoding` value come from.
///
/// `Accept-Encoding` is written as Alamofire writes it, each coding with a q-value falling by 0.1
/// from 1.0 in the list's order. A coding whose library is missing from the process (brotli, zstd)
/// drops out of both.
struct ContentDecoderRegistry: Sendable {
    /// Lupine's codings: brotli first, as in Alamofire's `br;q=1.0, gzip;q=0.9, deflate;q=0.8`;
    /// zstd next, ahead of gzip, since it makes smaller bodies that decode faster; deflate last.
    static let standard = ContentDecoderRegistry([.brotli, .zstd, .gzip, .deflate])

    /// Most codings one response may stack before it is refused (curl allows 5; real servers
    /// apply one).
    static let maximumStackedCodings = 4

    /// The codings decoded, available ones only, most preferred first.
    let codings: [ContentCoding]
    /// The `Accept-Encoding` value that lists `codings`: `br;q=1.0, zstd;q=0.9, gzip;q=0.8,
    /// deflate;q=0.7` when every library is present.
    let acceptEncoding: String

    /// A registry of the available codings among `candidates`, in their order.
    init(_ candidates: [ContentCoding]) {
        codings = candidates.filter(\.isAvailable)
        acceptEncoding = codings.map(\.token).qualityEncoded()
    }

    /// The coding `name` stands for, if Lupine decodes it.
    func coding(named name: some StringProtocol) -> ContentCoding? {
        codings.first { $0.isNamed(name) }
    }

    /// The codings to undo for a response with these header fields, in the order to undo them
    /// (the last applied first), or nil when its body is delivered as received: no
    /// `Content-Encoding`, only `identity`, or any coding Lupine does not decode (a body cannot be
    /// half decoded, and the field must keep telling the truth about it).
    ///
    /// Every `Content-Encoding` field counts, as one comma-separated list (RFC 9110, section 5.3).
    ///
    /// - Throws: ``ContentDecodingError/tooManyCodings(count:limit:)`` past
    ///   ``maximumStackedCodings``.
    func codingsToUndo(for headers: NIOHTTP1.HTTPHeaders) throws(ContentDecodingError) -> [ContentCoding]? {
        var applied: [ContentCoding] = []
        for field in headers where field.name.lupineEqualsIgnoringASCIICase("Content-Encoding") {
            for member in field.value.split(separator: ",") {
                let name = member.lupineTrimmingASCIIWhitespace()
                if name.isEmpty || name.lupineEqualsIgnoringASCIICase("identity") { continue }
                guard let coding = coding(named: name) else { return nil }
                applied.append(coding)
            }
        }
        guard !applied.isEmpty else { return nil }
        guard applied.count <= Self.maximumStackedCodings else {
            throw .tooManyCodings(count: applied.count, limit: Self.maximumStackedCodings)
        }
        return applied.reversed()
    }
}

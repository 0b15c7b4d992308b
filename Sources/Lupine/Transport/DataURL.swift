import Foundation

/// A `data:` URL (RFC 2397, `data:[<mediatype>][;base64],<data>`), decoded.
///
/// Valid URLs decode as swift-corelibs-foundation's `_DataURLProtocol` decodes them (what
/// URLSession on Linux, and Lupine before, answered them with), so their responses and bytes stay
/// what they were:
/// - the scheme is case-insensitive (RFC 3986, section 3.1); the rest of the URL is read as its
///   `absoluteString` spells it, query and fragment included;
/// - the media type is the part before the first `;` or the comma when it is one `type/subtype`
///   (one `/`, not first or last, no `=`); otherwise `text/plain`. No charset is implied:
///   `textEncodingName` is the first `charset=` parameter's value, or nil;
/// - `;base64` must be the last parameter; its data is percent-decoded, then decoded by
///   `Data(base64Encoded:)` (padding required, no whitespace);
/// - other data is percent-decoded into bytes, whatever the charset.
///
/// Where corelibs departs from RFC 2397 on a valid URL, Lupine follows the RFC: a media type with
/// no parameter counts (corelibs answered `data:application/json,{}` as `text/plain`), and the
/// names `base64` and `charset` are case-insensitive (RFC 2045, section 5.1).
///
/// A malformed URL throws the `Malformation` that says why, where corelibs' loader reported
/// nothing but to a URLSessionTask's delegate: no comma, a percent escape that is not two hex
/// digits, one in the media type, a byte that is not ASCII, data that is not base64.
struct DataURL: Equatable {
    /// Why a `data:` URL cannot be decoded.
    enum Malformation: Error, Equatable, CustomStringConvertible {
        /// The URL's scheme is not `data`.
        case notDataScheme
        /// No comma ends the media type: the URL has no data.
        case noComma
        /// A `%` in the media type or its parameters (corelibs accepts none there).
        case escapeInMediaType
        /// A `%` not followed by two hex digits.
        case badPercentEscape
        /// A byte outside ASCII, in the URL or, for base64 data, decoded from an escape.
        case notASCII
        /// Data marked `;base64` that `Data(base64Encoded:)` does not accept.
        case badBase64

        var description: String {
            switch self {
            case .notDataScheme: "The URL's scheme is not data."
            case .noComma: "The data: URL has no comma before its data (RFC 2397: data:[<mediatype>][;base64],<data>)."
            case .escapeInMediaType: "The data: URL has a percent escape in its media type."
            case .badPercentEscape: "The data: URL has a percent sign not followed by two hexadecimal digits."
            case .notASCII: "The data: URL holds a byte that is not ASCII."
            case .badBase64: "The data: URL's data is marked ;base64 but is not valid base64."
            }
        }
    }

    static let defaultMIMEType = "text/plain"

    let mimeType: String
    let textEncodingName: String?
    let data: Data

    /// Decodes `url`.
    init(_ url: URL) throws(Malformation) {
        try self.init(url.absoluteString)
    }

    /// Decodes the URL spelled `string`.
    init(_ string: String) throws(Malformation) {
        let bytes = Array(string.utf8)
        let scheme = Array("data:".utf8)
        guard bytes.count >= scheme.count,
              zip(bytes, scheme).allSatisfy({ $0.lupineASCIILowercased == $1 })
        else { throw .notDataScheme }
        guard let comma = bytes[scheme.count...].firstIndex(of: UInt8(ascii: ",")) else { throw .noComma }
        let header = bytes[scheme.count..<comma]
        if let byte = header.first(where: { $0 == UInt8(ascii: "%") || $0 >= 0x80 }) {
            throw byte == UInt8(ascii: "%") ? .escapeInMediaType : .notASCII
        }
        let segments = header.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        let parameters = segments.dropFirst()
        let isBase64 = parameters.last?.lowercased() == "base64"

        mimeType = Self.isTypeAndSubtype(segments[0]) ? segments[0] : Self.defaultMIMEType
        // Corelibs drops any further `=` from the value (no charset name has one).
        textEncodingName = parameters.first { $0.lowercased().hasPrefix("charset=") }
            .map { String($0.dropFirst("charset=".count).filter { $0 != "=" }) }

        let body = try Self.percentDecoded(bytes[(comma + 1)...])
        if isBase64 {
            // Foundation decodes base64 text: decoded escapes must leave it ASCII.
            guard !body.contains(where: { $0 >= 0x80 }),
                  let decoded = Data(base64Encoded: String(decoding: body, as: UTF8.self))
            else { throw .badBase64 }
            data = decoded
        } else {
            data = Data(body)
        }
    }

    /// Whether `candidate` reads `type/subtype`: one `/`, neither first nor last, and no `=`
    /// (corelibs takes a segment with `=` for a parameter).
    private static func isTypeAndSubtype(_ candidate: String) -> Bool {
        let utf8 = candidate.utf8
        let slashes = utf8.lazy.filter { $0 == UInt8(ascii: "/") }.count
        return slashes == 1 && utf8.first != UInt8(ascii: "/") && utf8.last != UInt8(ascii: "/")
            && !utf8.contains(UInt8(ascii: "="))
    }

    private static func percentDecoded(_ encoded: ArraySlice<UInt8>) throws(Malformation) -> [UInt8] {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(encoded.count)
        var index = encoded.startIndex
        while index < encoded.endIndex {
            let byte = encoded[index]
            guard byte < 0x80 else { throw .notASCII }
            guard byte == UInt8(ascii: "%") else {
                decoded.append(byte)
                index += 1
                continue
            }
            guard index + 2 < encoded.endIndex,
                  let high = hexValue(encoded[index + 1]),
                  let low = hexValue(encoded[index + 2])
            else { throw .badPercentEscape }
            decoded.append(high << 4 | low)
            index += 3
        }
        return decoded
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `ResponseSerializer` that decodes the body as a `String`.
///
/// The encoding is the one given to the serializer; else the charset the response names
/// (`HTTPURLResponse.textEncodingName`, or the `charset` parameter of its `Content-Type` in any case); else
/// ISO-8859-1, HTTP's historical default. An empty or missing body becomes `""` when the request method or status
/// code allows it, and `AFError.ResponseSerializationFailureReason.inputDataNilOrZeroLength` otherwise.
public final class StringResponseSerializer: ResponseSerializer {
    /// Transforms a non-empty body before it is decoded.
    public let dataPreprocessor: any DataPreprocessor
    /// The encoding to decode with; nil to use the response's charset, falling back to ISO-8859-1.
    public let encoding: String.Encoding?
    /// Status codes for which an empty body is acceptable.
    public let emptyResponseCodes: Set<Int>
    /// Request methods for which an empty body is acceptable.
    public let emptyRequestMethods: Set<HTTPMethod>

    /// Creates the serializer.
    ///
    /// - Parameters:
    ///   - dataPreprocessor:    Transforms a non-empty body. `PassthroughPreprocessor()` by default.
    ///   - encoding:            The encoding to decode with. nil by default: the response's charset, falling back
    ///                          to ISO-8859-1.
    ///   - emptyResponseCodes:  Status codes that allow an empty body. `[204, 205]` by default.
    ///   - emptyRequestMethods: Request methods that allow an empty body. `[.head]` by default.
    public init(dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
                encoding: String.Encoding? = nil,
                emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
                emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods) {
        self.dataPreprocessor = dataPreprocessor
        self.encoding = encoding
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
    }

    /// Decodes the preprocessed body as a string.
    ///
    /// - Parameters:
    ///   - request:  The last `URLRequest` sent, if any.
    ///   - response: The response received, if any; its charset picks the encoding when `encoding` is nil.
    ///   - data:     The body received, if any.
    ///   - error:    The error the request or its validation failed with, if any.
    /// - Returns: The decoded string, or `""` for an allowed empty body.
    /// - Throws: `error` unchanged when it is not nil; `AFError.responseSerializationFailed` with
    ///   `.inputDataNilOrZeroLength` for a disallowed empty body or `.stringSerializationFailed(encoding:)` when
    ///   the bytes are not valid in the encoding; or what the preprocessor throws.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws
        -> String {
        if let error { throw error }

        guard let data, !data.isEmpty else {
            guard emptyResponseAllowed(forRequest: request, response: response) else {
                throw AFError.responseSerializationFailed(reason: .inputDataNilOrZeroLength)
            }
            return ""
        }

        let body = try dataPreprocessor.preprocess(data)
        let actualEncoding = encoding
            ?? response.flatMap(Self.charsetName(of:)).flatMap(String.Encoding.init(ianaCharsetName:))
            ?? .isoLatin1

        guard let string = String(data: body, encoding: actualEncoding) else {
            throw AFError.responseSerializationFailed(reason: .stringSerializationFailed(encoding: actualEncoding))
        }
        return string
    }
}

extension StringResponseSerializer {
    /// The charset the response names: `textEncodingName`, else the `charset` parameter of its `Content-Type`.
    ///
    /// Parameter names are case-insensitive (RFC 9110, 8.3.1), and Apple's Foundation reads `Charset=UTF-8` as
    /// UTF-8; swift-corelibs-foundation matches only a lowercase `charset`, so its `textEncodingName` is nil for
    /// `text/html; Charset=UTF-8` and the body would be decoded as ISO-8859-1.
    static func charsetName(of response: HTTPURLResponse) -> String? {
        if let name = response.textEncodingName { return name }
        guard let contentType = response.value(forHTTPHeaderField: "Content-Type") else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            guard let equals = parameter.firstIndex(of: "="),
                  parameter[..<equals].lupineTrimmingASCIIWhitespace().lupineEqualsIgnoringASCIICase("charset")
            else { continue }
            var value = parameter[parameter.index(after: equals)...].lupineTrimmingASCIIWhitespace()
            if value.count >= 2, value.first == "\"", value.last == "\"" {
                value = value.dropFirst().dropLast()
            }
            return value.isEmpty ? nil : String(value)
        }
        return nil
    }
}

extension ResponseSerializer where Self == StringResponseSerializer {
    /// A `StringResponseSerializer` with the default preprocessor, encoding and empty-body policy.
    public static var string: StringResponseSerializer { StringResponseSerializer() }

    /// Creates a `StringResponseSerializer`.
    ///
    /// - Parameters:
    ///   - dataPreprocessor:    Transforms a non-empty body. `PassthroughPreprocessor()` by default.
    ///   - encoding:            The encoding to decode with. nil by default: the response's charset, falling back
    ///                          to ISO-8859-1.
    ///   - emptyResponseCodes:  Status codes that allow an empty body. `[204, 205]` by default.
    ///   - emptyRequestMethods: Request methods that allow an empty body. `[.head]` by default.
    /// - Returns: The serializer.
    public static func string(dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
                              encoding: String.Encoding? = nil,
                              emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
                              emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods)
        -> StringResponseSerializer {
        StringResponseSerializer(dataPreprocessor: dataPreprocessor,
                                 encoding: encoding,
                                 emptyResponseCodes: emptyResponseCodes,
                                 emptyRequestMethods: emptyRequestMethods)
    }
}

extension String.Encoding {
    /// The encoding an IANA charset name stands for, compared case-insensitively; nil for a name outside the
    /// table, so the caller falls back to its default.
    init?(ianaCharsetName name: String) {
        switch name.lowercased() {
        case "utf-8":
            self = .utf8
        case "iso-8859-1":
            self = .isoLatin1
        case "unicode-1-1", "iso-10646-ucs-2", "utf-16":
            self = .utf16
        case "utf-16be":
            self = .utf16BigEndian
        case "utf-16le":
            self = .utf16LittleEndian
        case "utf-32":
            self = .utf32
        case "utf-32be":
            self = .utf32BigEndian
        case "utf-32le":
            self = .utf32LittleEndian
        default:
            return nil
        }
    }
}

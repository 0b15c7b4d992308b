import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes an `Encodable` value as an `application/x-www-form-urlencoded` string with a
/// ``URLEncodedFormEncoder``, into the URL's query or the body.
///
/// Marked `@unchecked Sendable` because ``URLEncodedFormEncoder`` is a class whose custom strategies
/// may be non-`Sendable` closures: do not share closures that capture mutable state.
open class URLEncodedFormParameterEncoder: @unchecked Sendable, ParameterEncoder {
    /// Where the encoded form goes.
    public enum Destination {
        /// The query string for `GET`, `HEAD` and `DELETE`; the body for any other method.
        case methodDependent
        /// Always the query string.
        case queryString
        /// Always the body.
        case httpBody

        func encodesParametersInURL(for method: HTTPMethod) -> Bool {
            switch self {
            case .methodDependent: [.get, .head, .delete].contains(method)
            case .queryString: true
            case .httpBody: false
            }
        }
    }

    /// An encoder with a default ``URLEncodedFormEncoder`` and a method-dependent destination.
    public static var `default`: URLEncodedFormParameterEncoder { URLEncodedFormParameterEncoder() }

    /// The form encoder.
    public let encoder: URLEncodedFormEncoder

    /// Where the encoded form goes.
    public let destination: Destination

    /// Creates an encoder.
    ///
    /// - Parameters:
    ///   - encoder: The form encoder; a default ``URLEncodedFormEncoder`` unless given.
    ///   - destination: Where the form goes; `.methodDependent` unless given.
    public init(encoder: URLEncodedFormEncoder = URLEncodedFormEncoder(), destination: Destination = .methodDependent) {
        self.encoder = encoder
        self.destination = destination
    }

    /// Returns the request with the value encoded into its query string or body.
    ///
    /// In the query, the form is appended to any existing query with `&` (and the `?` removed when the
    /// result is empty). In the body, `Content-Type` is set to
    /// `application/x-www-form-urlencoded; charset=utf-8` unless the request already has one.
    ///
    /// - Parameters:
    ///   - parameters: The value to encode, or nil to return the request unchanged.
    ///   - request: The request to encode into.
    /// - Returns: The encoded request.
    /// - Throws: `AFError.parameterEncoderFailed` with `.missingRequiredComponent(.url)` when the request
    ///   has no URL, `.missingRequiredComponent(.httpMethod(rawValue: "nil"))` when it has no method, or
    ///   `.encoderFailed(error:)` wrapping the encoder's error, or wrapping `URLError(.badURL)` when the
    ///   encoder's `allowedCharacters` leave in the form a character a URL query cannot hold.
    open func encode<Parameters: Encodable>(_ parameters: Parameters?,
                                            into request: URLRequest) throws -> URLRequest {
        guard let parameters else { return request }

        var request = request
        guard let url = request.url else {
            throw AFError.parameterEncoderFailed(reason: .missingRequiredComponent(.url))
        }
        guard let method = request.method else {
            throw AFError.parameterEncoderFailed(reason: .missingRequiredComponent(.httpMethod(rawValue: "nil")))
        }

        if destination.encodesParametersInURL(for: method),
           var components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            let query: String = try encoded { try encoder.encode(parameters) }
            // Foundation stops the process when a query with such characters is set (Alamofire crashes
            // there); Lupine reports it instead.
            guard Self.isValidPercentEncodedQuery(query) else {
                throw AFError.parameterEncoderFailed(reason: .encoderFailed(error: URLError(.badURL)))
            }
            let combinedQuery = [components.percentEncodedQuery, query].compactMap { $0 }.joined(separator: "&")
            components.percentEncodedQuery = combinedQuery.isEmpty ? nil : combinedQuery
            guard let newURL = components.url else {
                throw AFError.parameterEncoderFailed(reason: .missingRequiredComponent(.url))
            }
            request.url = newURL
        } else {
            if request.headers["Content-Type"] == nil {
                request.headers.update(.contentType("application/x-www-form-urlencoded; charset=utf-8"))
            }
            request.httpBody = try encoded { try encoder.encode(parameters) as Data }
        }
        return request
    }

    /// Whether `URLComponents` accepts `query` as a percent-encoded query: only RFC 3986 query
    /// characters (`CharacterSet.urlQueryAllowed`) and well-formed `%XX` escapes.
    static func isValidPercentEncodedQuery(_ query: String) -> Bool {
        var scalars = query.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            if scalar == "%" {
                guard let high = scalars.next(), let low = scalars.next(),
                      high.properties.isASCIIHexDigit, low.properties.isASCIIHexDigit else { return false }
            } else if !CharacterSet.urlQueryAllowed.contains(scalar) {
                return false
            }
        }
        return true
    }

    /// Runs the form encoder, wrapping its error as `AFError.parameterEncoderFailed(reason: .encoderFailed(error:))`.
    private func encoded<Output>(_ encode: () throws -> Output) throws -> Output {
        do {
            return try encode()
        } catch {
            throw AFError.parameterEncoderFailed(reason: .encoderFailed(error: error))
        }
    }
}

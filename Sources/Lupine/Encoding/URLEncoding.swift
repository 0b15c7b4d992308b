import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes parameters as an `application/x-www-form-urlencoded` string, in the URL's query or in the body.
///
/// Top-level keys are sorted. A nested dictionary becomes `key[subkey]`, an array becomes repeated
/// keys per ``ArrayEncoding``, a `Bool` (or a Bool-typed `NSNumber`) is written per ``BoolEncoding``,
/// and any other value as `"\(value)"`. Keys and values are percent-escaped with
/// `CharacterSet.afURLQueryAllowed`.
public struct URLEncoding: ParameterEncoding {
    /// Where the encoded string goes.
    public enum Destination: Sendable {
        /// The query string for `GET`, `HEAD` and `DELETE`; the body for any other method (or none).
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

    /// How the key of an array element is written.
    public enum ArrayEncoding: Sendable {
        /// `key[]` for every element.
        case brackets
        /// `key` for every element.
        case noBrackets
        /// `key[<index>]`.
        case indexInBrackets
        /// The key the closure returns for the array's key and the element's index.
        case custom(@Sendable (_ key: String, _ index: Int) -> String)

        func encode(key: String, atIndex index: Int) -> String {
            switch self {
            case .brackets: "\(key)[]"
            case .noBrackets: key
            case .indexInBrackets: "\(key)[\(index)]"
            case let .custom(encoding): encoding(key, index)
            }
        }
    }

    /// How a `Bool` is written.
    public enum BoolEncoding: Sendable {
        /// `1` and `0`.
        case numeric
        /// `true` and `false`.
        case literal

        func encode(value: Bool) -> String {
            switch self {
            case .numeric: value ? "1" : "0"
            case .literal: value ? "true" : "false"
            }
        }
    }

    /// `URLEncoding()`: method-dependent destination, `.brackets`, `.numeric`.
    public static var `default`: URLEncoding { URLEncoding() }

    /// An encoding that always writes the query string.
    public static var queryString: URLEncoding { URLEncoding(destination: .queryString) }

    /// An encoding that always writes the body.
    public static var httpBody: URLEncoding { URLEncoding(destination: .httpBody) }

    // `arrayEncoding` is stored first: the value then takes 18 bytes instead of 25 and fits in
    // an existential's inline buffer, so `encoding: URLEncoding.default`, the default argument of
    // every `request(...)`, is passed without a heap box (one allocation per request).

    /// How array element keys are written.
    public let arrayEncoding: ArrayEncoding
    /// Where the encoded string goes.
    public let destination: Destination
    /// How `Bool` values are written.
    public let boolEncoding: BoolEncoding

    /// Creates an encoding.
    ///
    /// - Parameters:
    ///   - destination: Where the encoded string goes; `.methodDependent` by default.
    ///   - arrayEncoding: How array element keys are written; `.brackets` by default.
    ///   - boolEncoding: How `Bool` values are written; `.numeric` by default.
    public init(destination: Destination = .methodDependent,
                arrayEncoding: ArrayEncoding = .brackets,
                boolEncoding: BoolEncoding = .numeric) {
        self.destination = destination
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
    }

    /// Returns the request with the parameters encoded into its query string or body.
    ///
    /// For the query string, the encoded string is appended to any existing query with `&`; an empty
    /// dictionary leaves the URL untouched. For the body, `Content-Type` is set to
    /// `application/x-www-form-urlencoded; charset=utf-8` unless the request already has one.
    ///
    /// - Parameters:
    ///   - urlRequest: The request to encode into.
    ///   - parameters: The parameters, or nil to return the request unchanged.
    /// - Returns: The encoded request.
    /// - Throws: `AFError.parameterEncodingFailed(reason: .missingURL)` when the query is the destination
    ///   and the request has no URL, or the error of `asURLRequest()`.
    public func encode(_ urlRequest: any URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest {
        var urlRequest = try urlRequest.asURLRequest()
        guard let parameters else { return urlRequest }

        if let method = urlRequest.method, destination.encodesParametersInURL(for: method) {
            guard let url = urlRequest.url else {
                throw AFError.parameterEncodingFailed(reason: .missingURL)
            }
            if !parameters.isEmpty, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
                let existingQuery = components.percentEncodedQuery.map { $0 + "&" } ?? ""
                components.percentEncodedQuery = existingQuery + query(parameters)
                urlRequest.url = components.url
            }
        } else {
            if urlRequest.headers["Content-Type"] == nil {
                urlRequest.headers.update(.contentType("application/x-www-form-urlencoded; charset=utf-8"))
            }
            urlRequest.httpBody = Data(query(parameters).utf8)
        }
        return urlRequest
    }

    /// Flattens one key and value into percent-escaped `(key, value)` pairs, recursing into
    /// dictionaries (keys sorted) and arrays.
    ///
    /// - Parameters:
    ///   - key: The key, unescaped.
    ///   - value: The value: a dictionary, an array, a `Bool`, or anything printable.
    /// - Returns: The escaped pairs, in order.
    public func queryComponents(fromKey key: String, value: Any) -> [(String, String)] {
        switch value {
        case let dictionary as [String: Any]:
            // Alamofire leaves nested keys in dictionary order; sorting keeps the output stable.
            return dictionary.sorted { $0.key < $1.key }.flatMap { nestedKey, nestedValue in
                queryComponents(fromKey: "\(key)[\(nestedKey)]", value: nestedValue)
            }
        case let array as [Any]:
            return array.enumerated().flatMap { index, element in
                queryComponents(fromKey: arrayEncoding.encode(key: key, atIndex: index), value: element)
            }
        case let number as NSNumber:
            // Swift numbers and Bools (also inside an Optional) bridge to NSNumber here, on Linux too.
            if Self.isBoolean(number) {
                return [(escape(key), escape(boolEncoding.encode(value: number.boolValue)))]
            }
            return [(escape(key), escape("\(number)"))]
        case let bool as Bool where type(of: value) == Bool.self:
            return [(escape(key), escape(boolEncoding.encode(value: bool)))]
        default:
            return [(escape(key), escape("\(value)"))]
        }
    }

    /// Percent-escapes a query key or value with `CharacterSet.afURLQueryAllowed`.
    ///
    /// - Parameter string: The string to escape.
    /// - Returns: The escaped string, or `string` itself if escaping fails.
    public func escape(_ string: String) -> String {
        Self.queryEscaper.escape(string) ?? string
    }

    /// `escape(_:)`'s escaper: `.afURLQueryAllowed`'s ASCII table, made once.
    private static let queryEscaper = PercentEscaper(allowing: .afURLQueryAllowed)

    private func query(_ parameters: Parameters) -> String {
        parameters.sorted { $0.key < $1.key }
            .flatMap { key, value in queryComponents(fromKey: key, value: value) }
            .map { "\($0)=\($1)" }
            .joined(separator: "&")
    }

    /// Whether the number holds a Bool rather than an integer.
    ///
    /// `number as? Bool` cannot tell: on Linux (swift-corelibs-foundation) it also succeeds for
    /// `NSNumber(value: 0)` and `NSNumber(value: 1)`. Foundation, corelibs-foundation included, stores a
    /// Bool (a bridged Swift `Bool` or `NSNumber(value: true)`) with the Objective-C type encoding `c`,
    /// while integers made on Linux report `i`, `q`, `s`... So the type encoding decides, as in Alamofire.
    static func isBoolean(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c"
    }
}

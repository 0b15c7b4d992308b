import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes parameters as a JSON body with `JSONSerialization`.
///
/// `Content-Type` is set to `application/json` unless the request already has one.
public struct JSONEncoding: ParameterEncoding {
    /// The error wrapped in `AFError.parameterEncodingFailed(reason: .jsonEncodingFailed(error:))`
    /// when the object cannot be written as JSON.
    public enum Error: Swift.Error {
        /// `JSONSerialization.isValidJSONObject` rejected the object.
        case invalidJSONObject
    }

    /// `JSONEncoding()`: compact output.
    public static var `default`: JSONEncoding { JSONEncoding() }

    /// An encoding that writes indented JSON.
    public static var prettyPrinted: JSONEncoding { JSONEncoding(options: .prettyPrinted) }

    /// The `JSONSerialization` writing options.
    public let options: JSONSerialization.WritingOptions

    /// Creates an encoding.
    ///
    /// - Parameter options: The `JSONSerialization` writing options; none by default.
    public init(options: JSONSerialization.WritingOptions = []) {
        self.options = options
    }

    /// Returns the request with the parameters as its JSON body.
    ///
    /// - Parameters:
    ///   - urlRequest: The request to encode into.
    ///   - parameters: The parameters, or nil to return the request unchanged.
    /// - Returns: The encoded request.
    /// - Throws: `AFError.parameterEncodingFailed(reason: .jsonEncodingFailed(error:))` wrapping
    ///   ``Error/invalidJSONObject`` or the `JSONSerialization` error, or the error of `asURLRequest()`.
    public func encode(_ urlRequest: any URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest {
        try encode(urlRequest, withJSONObject: parameters)
    }

    /// Returns the request with any JSON-compatible object (for example an array) as its JSON body.
    ///
    /// - Parameters:
    ///   - urlRequest: The request to encode into.
    ///   - jsonObject: The object, or nil to return the request unchanged.
    /// - Returns: The encoded request.
    /// - Throws: `AFError.parameterEncodingFailed(reason: .jsonEncodingFailed(error:))` wrapping
    ///   ``Error/invalidJSONObject`` or the `JSONSerialization` error, or the error of `asURLRequest()`.
    public func encode(_ urlRequest: any URLRequestConvertible, withJSONObject jsonObject: Any? = nil) throws -> URLRequest {
        var urlRequest = try urlRequest.asURLRequest()
        guard let jsonObject else { return urlRequest }

        // Checked first: on some platforms writing an invalid object raises instead of throwing.
        guard JSONSerialization.isValidJSONObject(jsonObject) else {
            throw AFError.parameterEncodingFailed(reason: .jsonEncodingFailed(error: Error.invalidJSONObject))
        }
        do {
            let data = try JSONSerialization.data(withJSONObject: jsonObject, options: options)
            if urlRequest.headers["Content-Type"] == nil {
                urlRequest.headers.update(.contentType("application/json"))
            }
            urlRequest.httpBody = data
        } catch {
            throw AFError.parameterEncodingFailed(reason: .jsonEncodingFailed(error: error))
        }
        return urlRequest
    }
}

extension JSONEncoding.Error {
    /// What went wrong, in words.
    public var localizedDescription: String {
        switch self {
        case .invalidJSONObject:
            "The parameters cannot be written as JSON: JSONSerialization accepts only dictionaries with "
                + "String keys, arrays, strings, finite numbers, booleans and NSNull."
        }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes a ``Parameters`` dictionary into a request: its query string, or its body.
///
/// ``URLEncoding`` and ``JSONEncoding`` conform; write your own for other formats.
public protocol ParameterEncoding: Sendable {
    /// Returns the request with the parameters encoded into it.
    ///
    /// - Parameters:
    ///   - urlRequest: The request to encode into.
    ///   - parameters: The parameters, or nil to leave the request unchanged.
    /// - Returns: The encoded request.
    /// - Throws: An `AFError` (usually `.parameterEncodingFailed`) or the error of `asURLRequest()`.
    func encode(_ urlRequest: any URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest
}

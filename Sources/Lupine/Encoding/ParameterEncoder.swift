import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes an `Encodable` value into a request: its query string, or its body.
///
/// ``JSONParameterEncoder`` and ``URLEncodedFormParameterEncoder`` conform and are reached with
/// `.json` and `.urlEncodedForm`.
public protocol ParameterEncoder: Sendable {
    /// Returns the request with the parameters encoded into it.
    ///
    /// - Parameters:
    ///   - parameters: The value to encode, or nil to leave the request unchanged.
    ///   - request: The request to encode into.
    /// - Returns: The encoded request.
    /// - Throws: An `AFError`: `.parameterEncodingFailed` or `.parameterEncoderFailed`.
    func encode<Parameters: Encodable & Sendable>(_ parameters: Parameters?, into request: URLRequest) throws -> URLRequest
}

extension ParameterEncoder where Self == JSONParameterEncoder {
    /// A ``JSONParameterEncoder`` with a default `JSONEncoder`.
    public static var json: JSONParameterEncoder { JSONParameterEncoder() }

    /// A ``JSONParameterEncoder`` with the given `JSONEncoder`.
    ///
    /// - Parameter encoder: The encoder; a default `JSONEncoder` unless given.
    /// - Returns: The parameter encoder.
    public static func json(encoder: JSONEncoder = JSONEncoder()) -> JSONParameterEncoder {
        JSONParameterEncoder(encoder: encoder)
    }
}

extension ParameterEncoder where Self == URLEncodedFormParameterEncoder {
    /// A ``URLEncodedFormParameterEncoder`` with a default encoder and a method-dependent destination.
    public static var urlEncodedForm: URLEncodedFormParameterEncoder { URLEncodedFormParameterEncoder() }

    /// A ``URLEncodedFormParameterEncoder`` with the given encoder and destination.
    ///
    /// - Parameters:
    ///   - encoder: The form encoder; a default ``URLEncodedFormEncoder`` unless given.
    ///   - destination: Where the form goes; `.methodDependent` unless given.
    /// - Returns: The parameter encoder.
    public static func urlEncodedForm(encoder: URLEncodedFormEncoder = URLEncodedFormEncoder(),
                                      destination: URLEncodedFormParameterEncoder.Destination = .methodDependent)
        -> URLEncodedFormParameterEncoder {
        URLEncodedFormParameterEncoder(encoder: encoder, destination: destination)
    }
}

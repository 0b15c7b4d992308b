import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes an `Encodable` value as a JSON body with a `JSONEncoder`.
///
/// Marked `@unchecked Sendable` because `JSONEncoder` is a class: configure the encoder before
/// handing it over and do not change it afterwards.
open class JSONParameterEncoder: @unchecked Sendable, ParameterEncoder {
    /// An encoder with a default `JSONEncoder`.
    public static var `default`: JSONParameterEncoder { JSONParameterEncoder() }

    /// An encoder whose `JSONEncoder` writes indented output.
    public static var prettyPrinted: JSONParameterEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .prettyPrinted
        return JSONParameterEncoder(encoder: encoder)
    }

    /// An encoder whose `JSONEncoder` sorts object keys.
    @available(macOS 10.13, iOS 11.0, tvOS 11.0, watchOS 4.0, *)
    public static var sortedKeys: JSONParameterEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return JSONParameterEncoder(encoder: encoder)
    }

    /// The `JSONEncoder` that writes the body.
    public let encoder: JSONEncoder

    /// Creates an encoder.
    ///
    /// - Parameter encoder: The `JSONEncoder` to use; a default one unless given.
    public init(encoder: JSONEncoder = JSONEncoder()) {
        self.encoder = encoder
    }

    /// Returns the request with the value as its JSON body.
    ///
    /// `Content-Type` is set to `application/json` unless the request already has one.
    ///
    /// - Parameters:
    ///   - parameters: The value to encode, or nil to return the request unchanged.
    ///   - request: The request to encode into.
    /// - Returns: The encoded request.
    /// - Throws: `AFError.parameterEncodingFailed(reason: .jsonEncodingFailed(error:))` wrapping the
    ///   `JSONEncoder` error.
    open func encode<Parameters: Encodable>(_ parameters: Parameters?,
                                            into request: URLRequest) throws -> URLRequest {
        guard let parameters else { return request }

        var request = request
        do {
            request.httpBody = try encoder.encode(parameters)
        } catch {
            throw AFError.parameterEncodingFailed(reason: .jsonEncodingFailed(error: error))
        }
        if request.headers["Content-Type"] == nil {
            request.headers.update(.contentType("application/json"))
        }
        return request
    }
}

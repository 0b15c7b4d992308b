import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `ResponseSerializer` that decodes the body as `T` with a `DataDecoder` (`JSONDecoder()` by default).
///
/// An empty or missing body, when the request method or status code allows it, becomes `T.emptyValue()` if `T`
/// conforms to `EmptyResponse` (as `Empty` does), and
/// `AFError.ResponseSerializationFailureReason.invalidEmptyResponse(type:)` otherwise. A disallowed empty body is
/// `.inputDataNilOrZeroLength`.
public final class DecodableResponseSerializer<T: Decodable>: ResponseSerializer where T: Sendable {
    /// Transforms a non-empty body before it is decoded.
    public let dataPreprocessor: any DataPreprocessor
    /// Decodes the body.
    public let decoder: any DataDecoder
    /// Status codes for which an empty body is acceptable.
    public let emptyResponseCodes: Set<Int>
    /// Request methods for which an empty body is acceptable.
    public let emptyRequestMethods: Set<HTTPMethod>

    /// Creates the serializer.
    ///
    /// - Parameters:
    ///   - dataPreprocessor:    Transforms a non-empty body. `PassthroughPreprocessor()` by default.
    ///   - decoder:             Decodes the body. `JSONDecoder()` by default.
    ///   - emptyResponseCodes:  Status codes that allow an empty body. `[204, 205]` by default.
    ///   - emptyRequestMethods: Request methods that allow an empty body. `[.head]` by default.
    public init(dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer.defaultDataPreprocessor,
                decoder: any DataDecoder = JSONDecoder(),
                emptyResponseCodes: Set<Int> = DecodableResponseSerializer.defaultEmptyResponseCodes,
                emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer.defaultEmptyRequestMethods) {
        self.dataPreprocessor = dataPreprocessor
        self.decoder = decoder
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
    }

    /// Decodes the preprocessed body as `T`.
    ///
    /// - Parameters:
    ///   - request:  The last `URLRequest` sent, if any.
    ///   - response: The response received, if any.
    ///   - data:     The body received, if any.
    ///   - error:    The error the request or its validation failed with, if any.
    /// - Returns: The decoded value, or `T.emptyValue()` for an allowed empty body.
    /// - Throws: `error` unchanged when it is not nil; `AFError.responseSerializationFailed` with
    ///   `.inputDataNilOrZeroLength` for a disallowed empty body, `.invalidEmptyResponse(type:)` for an allowed
    ///   empty body when `T` is not an `EmptyResponse`, or `.decodingFailed(error:)` when the decoder throws; or
    ///   what the preprocessor throws.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws
        -> T {
        if let error { throw error }

        guard let data, !data.isEmpty else {
            guard emptyResponseAllowed(forRequest: request, response: response) else {
                throw AFError.responseSerializationFailed(reason: .inputDataNilOrZeroLength)
            }
            guard let emptyType = T.self as? any EmptyResponse.Type,
                  let emptyValue = emptyType.emptyValue() as? T else {
                throw AFError.responseSerializationFailed(reason: .invalidEmptyResponse(type: "\(T.self)"))
            }
            return emptyValue
        }

        let body = try dataPreprocessor.preprocess(data)
        do {
            return try decoder.decode(T.self, from: body)
        } catch {
            throw AFError.responseSerializationFailed(reason: .decodingFailed(error: error))
        }
    }
}

extension ResponseSerializer {
    /// Creates a `DecodableResponseSerializer` for `type`.
    ///
    /// - Parameters:
    ///   - type:                The type to decode.
    ///   - dataPreprocessor:    Transforms a non-empty body. `PassthroughPreprocessor()` by default.
    ///   - decoder:             Decodes the body. `JSONDecoder()` by default.
    ///   - emptyResponseCodes:  Status codes that allow an empty body. `[204, 205]` by default.
    ///   - emptyRequestMethods: Request methods that allow an empty body. `[.head]` by default.
    /// - Returns: The serializer.
    public static func decodable<T: Decodable>(
        of type: T.Type,
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<T>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<T>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<T>.defaultEmptyRequestMethods
    ) -> DecodableResponseSerializer<T> where Self == DecodableResponseSerializer<T> {
        DecodableResponseSerializer<T>(dataPreprocessor: dataPreprocessor,
                                       decoder: decoder,
                                       emptyResponseCodes: emptyResponseCodes,
                                       emptyRequestMethods: emptyRequestMethods)
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `ResponseSerializer` that returns the body as `Data`, after its preprocessor.
///
/// An empty or missing body becomes `Data()` when the request method or status code allows it, and
/// `AFError.ResponseSerializationFailureReason.inputDataNilOrZeroLength` otherwise.
public final class DataResponseSerializer: ResponseSerializer {
    /// Transforms a non-empty body before it is returned.
    public let dataPreprocessor: any DataPreprocessor
    /// Status codes for which an empty body is acceptable.
    public let emptyResponseCodes: Set<Int>
    /// Request methods for which an empty body is acceptable.
    public let emptyRequestMethods: Set<HTTPMethod>

    /// Creates the serializer.
    ///
    /// - Parameters:
    ///   - dataPreprocessor:    Transforms a non-empty body. `PassthroughPreprocessor()` by default.
    ///   - emptyResponseCodes:  Status codes that allow an empty body. `[204, 205]` by default.
    ///   - emptyRequestMethods: Request methods that allow an empty body. `[.head]` by default.
    public init(dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
                emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
                emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods) {
        self.dataPreprocessor = dataPreprocessor
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
    }

    /// Returns the preprocessed body.
    ///
    /// - Parameters:
    ///   - request:  The last `URLRequest` sent, if any.
    ///   - response: The response received, if any.
    ///   - data:     The body received, if any.
    ///   - error:    The error the request or its validation failed with, if any.
    /// - Returns: The preprocessed body, or `Data()` for an allowed empty body.
    /// - Throws: `error` unchanged when it is not nil; `AFError.responseSerializationFailed` with
    ///   `.inputDataNilOrZeroLength` for a disallowed empty body; or what the preprocessor throws.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws
        -> Data {
        if let error { throw error }

        guard let data, !data.isEmpty else {
            guard emptyResponseAllowed(forRequest: request, response: response) else {
                throw AFError.responseSerializationFailed(reason: .inputDataNilOrZeroLength)
            }
            return Data()
        }

        return try dataPreprocessor.preprocess(data)
    }
}

extension DataResponseSerializer {
    /// The serializer with every default. It holds constants only, so the requests that ask for
    /// the defaults share it.
    private static let withDefaults = DataResponseSerializer()

    /// A serializer with these settings: the shared one when they are the defaults (one
    /// allocation fewer per request). The default sets compare by their storage first, so the
    /// check costs no hashing when the caller passed them.
    static func reusable(dataPreprocessor: any DataPreprocessor, emptyResponseCodes: Set<Int>,
                         emptyRequestMethods: Set<HTTPMethod>) -> DataResponseSerializer {
        if dataPreprocessor is PassthroughPreprocessor,
           emptyResponseCodes == ResponseSerializerDefaults.emptyResponseCodes,
           emptyRequestMethods == ResponseSerializerDefaults.emptyRequestMethods {
            return withDefaults
        }
        return DataResponseSerializer(dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes,
                                      emptyRequestMethods: emptyRequestMethods)
    }
}

extension ResponseSerializer where Self == DataResponseSerializer {
    /// A `DataResponseSerializer` with the default preprocessor and empty-body policy.
    public static var data: DataResponseSerializer { DataResponseSerializer() }

    /// Creates a `DataResponseSerializer`.
    ///
    /// - Parameters:
    ///   - dataPreprocessor:    Transforms a non-empty body. `PassthroughPreprocessor()` by default.
    ///   - emptyResponseCodes:  Status codes that allow an empty body. `[204, 205]` by default.
    ///   - emptyRequestMethods: Request methods that allow an empty body. `[.head]` by default.
    /// - Returns: The serializer.
    public static func data(dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
                            emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
                            emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods)
        -> DataResponseSerializer {
        DataResponseSerializer(dataPreprocessor: dataPreprocessor,
                               emptyResponseCodes: emptyResponseCodes,
                               emptyRequestMethods: emptyRequestMethods)
    }
}

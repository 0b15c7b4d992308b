import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `ResponseSerializer` that parses the body with `JSONSerialization`, kept (deprecated, as in
/// Alamofire 5.12) so that older code keeps compiling.
///
/// An empty or missing body is an error, unless the request method or the status code allows an
/// empty body: the value is then `NSNull()`.
///
/// Its `SerializedObject` is `any Sendable`, where Alamofire's is `Any`: the serializer protocols
/// require a `Sendable` value, and in the Swift 6 language mode, in which Lupine is built, no type
/// whose value is `Any` can conform to them (Alamofire, built in the Swift 5 mode, conforms with a
/// warning). The value holds exactly what `JSONSerialization` returned, so `value as? [String: Any]`
/// works as with Alamofire. `responseJSON` hands over Alamofire's types, `AFDataResponse<Any>` and
/// `AFDownloadResponse<Any>`; code that passes this serializer to `response(responseSerializer:)`
/// itself gets an `AFDataResponse<any Sendable>`.
@available(*, deprecated, message: "JSONResponseSerializer deprecated and will be removed in Alamofire 6. Use DecodableResponseSerializer instead.")
public final class JSONResponseSerializer: ResponseSerializer {
    /// Transforms a non-empty body before it is parsed.
    public let dataPreprocessor: any DataPreprocessor
    /// Status codes for which an empty body is acceptable.
    public let emptyResponseCodes: Set<Int>
    /// Request methods for which an empty body is acceptable.
    public let emptyRequestMethods: Set<HTTPMethod>
    /// Options handed to `JSONSerialization`.
    public let options: JSONSerialization.ReadingOptions

    /// Creates the serializer.
    ///
    /// - Parameters:
    ///   - dataPreprocessor:    Transforms a non-empty body. `PassthroughPreprocessor()` by default.
    ///   - emptyResponseCodes:  Status codes that allow an empty body. `[204, 205]` by default.
    ///   - emptyRequestMethods: Request methods that allow an empty body. `[.head]` by default.
    ///   - options:             `JSONSerialization` options. `.allowFragments` by default.
    public init(dataPreprocessor: any DataPreprocessor = JSONResponseSerializer.defaultDataPreprocessor,
                emptyResponseCodes: Set<Int> = JSONResponseSerializer.defaultEmptyResponseCodes,
                emptyRequestMethods: Set<HTTPMethod> = JSONResponseSerializer.defaultEmptyRequestMethods,
                options: JSONSerialization.ReadingOptions = .allowFragments) {
        self.dataPreprocessor = dataPreprocessor
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
        self.options = options
    }

    /// Parses the preprocessed body.
    ///
    /// - Returns: What `JSONSerialization` made of the body, or `NSNull()` for an allowed empty body.
    /// - Throws: `error` unchanged when it is not nil; `AFError.responseSerializationFailed` with
    ///   `.inputDataNilOrZeroLength` for a disallowed empty body or `.jsonSerializationFailed(error:)`
    ///   for a body that is not JSON; or what the preprocessor throws.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws
        -> any Sendable {
        if let error { throw error }

        guard let data, !data.isEmpty else {
            guard emptyResponseAllowed(forRequest: request, response: response) else {
                throw AFError.responseSerializationFailed(reason: .inputDataNilOrZeroLength)
            }
            return Self.sendable(NSNull())
        }

        let preprocessed = try dataPreprocessor.preprocess(data)
        do {
            return Self.sendable(try JSONSerialization.jsonObject(with: preprocessed, options: options))
        } catch {
            throw AFError.responseSerializationFailed(reason: .jsonSerializationFailed(error: error))
        }
    }

    /// `value` seen as `any Sendable`. `Sendable` is a marker protocol: at run time an
    /// `any Sendable` is laid out and described exactly as an `Any`, so this reinterprets the same
    /// existential. The objects `JSONSerialization` makes are never mutated after parsing.
    private static func sendable(_ value: Any) -> any Sendable {
        withUnsafePointer(to: value) { pointer in
            UnsafeRawPointer(pointer).assumingMemoryBound(to: (any Sendable).self).pointee
        }
    }
}

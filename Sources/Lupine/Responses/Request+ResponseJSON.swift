import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// `responseJSON`, deprecated in Alamofire 5.12 and kept so that older code keeps compiling, with
// Alamofire's types: the handler takes an `AFDataResponse<Any>` (`AFDownloadResponse<Any>`), so
// code that names that type in a closure, a function or a `DataResponse<Any, AFError>` variable
// compiles unchanged. The serializer's value is `any Sendable` (see `JSONResponseSerializer`);
// the response handed over holds the same value, typed as Alamofire types it.
//
// The handler's response is `sending` (Alamofire's is not): it is made for that one call and not
// used after it, and so Swift 6 code may hand it on, as older code does with
// `continuation.resume(returning: $0)`. Any closure of Alamofire's type converts to this one.

extension DataRequest {
    /// Parses the body with `JSONSerialization` (see `JSONResponseSerializer`), then calls
    /// `completionHandler` on `queue`.
    ///
    /// - Parameters:
    ///   - queue:               Where `completionHandler` runs. The Session's callback queue by default on Linux.
    ///   - dataPreprocessor:    Transforms a non-empty body. `PassthroughPreprocessor()` by default.
    ///   - emptyResponseCodes:  Status codes that allow an empty body (value `NSNull()`). `[204, 205]` by default.
    ///   - emptyRequestMethods: Request methods that allow an empty body. `[.head]` by default.
    ///   - options:             `JSONSerialization` options. `.allowFragments` by default.
    ///   - completionHandler:   Receives the response; a body that is not JSON fails with
    ///     `AFError.responseSerializationFailed(reason: .jsonSerializationFailed(error:))`.
    @available(*, deprecated, message: "responseJSON deprecated and will be removed in Alamofire 6. Use responseDecodable instead.")
    @preconcurrency
    @discardableResult
    public func responseJSON(queue: DispatchQueue = .lupineDefault,
                             dataPreprocessor: any DataPreprocessor = JSONResponseSerializer.defaultDataPreprocessor,
                             emptyResponseCodes: Set<Int> = JSONResponseSerializer.defaultEmptyResponseCodes,
                             emptyRequestMethods: Set<HTTPMethod> = JSONResponseSerializer.defaultEmptyRequestMethods,
                             options: JSONSerialization.ReadingOptions = .allowFragments,
                             completionHandler: @escaping @Sendable (sending AFDataResponse<Any>) -> Void) -> Self {
        response(queue: queue,
                 responseSerializer: JSONResponseSerializer(dataPreprocessor: dataPreprocessor,
                                                            emptyResponseCodes: emptyResponseCodes,
                                                            emptyRequestMethods: emptyRequestMethods,
                                                            options: options)) { response in
            completionHandler(response.typedAsAny)
        }
    }
}

extension DownloadRequest {
    /// Reads the downloaded file and parses it with `JSONSerialization` (see
    /// `JSONResponseSerializer`), then calls `completionHandler` on `queue`.
    ///
    /// - Parameters:
    ///   - queue:               Where `completionHandler` runs. The Session's callback queue by default on Linux.
    ///   - dataPreprocessor:    Transforms a non-empty body. `PassthroughPreprocessor()` by default.
    ///   - emptyResponseCodes:  Status codes that allow an empty body (value `NSNull()`). `[204, 205]` by default.
    ///   - emptyRequestMethods: Request methods that allow an empty body. `[.head]` by default.
    ///   - options:             `JSONSerialization` options. `.allowFragments` by default.
    ///   - completionHandler:   Receives the response; a file that is not JSON fails with
    ///     `AFError.responseSerializationFailed(reason: .jsonSerializationFailed(error:))`.
    @available(*, deprecated, message: "responseJSON deprecated and will be removed in Alamofire 6. Use responseDecodable instead.")
    @preconcurrency
    @discardableResult
    public func responseJSON(queue: DispatchQueue = .lupineDefault,
                             dataPreprocessor: any DataPreprocessor = JSONResponseSerializer.defaultDataPreprocessor,
                             emptyResponseCodes: Set<Int> = JSONResponseSerializer.defaultEmptyResponseCodes,
                             emptyRequestMethods: Set<HTTPMethod> = JSONResponseSerializer.defaultEmptyRequestMethods,
                             options: JSONSerialization.ReadingOptions = .allowFragments,
                             completionHandler: @escaping @Sendable (sending AFDownloadResponse<Any>) -> Void) -> Self {
        response(queue: queue,
                 responseSerializer: JSONResponseSerializer(dataPreprocessor: dataPreprocessor,
                                                            emptyResponseCodes: emptyResponseCodes,
                                                            emptyRequestMethods: emptyRequestMethods,
                                                            options: options)) { response in
            completionHandler(response.typedAsAny)
        }
    }
}

// Swift 6 checking lets no generic code of Lupine make a `DataResponse<Any, AFError>` (its `Success`
// must be `Sendable`, which `Any` is not), while Alamofire, built in the Swift 5 mode, makes one
// with a warning. `Sendable` is a marker protocol with no run-time form: `any Sendable` and `Any`
// are one type at run time (same metadata, same layout), so the response is reinterpreted as is.

extension DataResponse where Success == any Sendable, Failure == AFError {
    /// This response typed as Alamofire's `responseJSON` hands it over.
    fileprivate var typedAsAny: AFDataResponse<Any> {
        unsafeBitCast(self, to: AFDataResponse<Any>.self)
    }
}

extension DownloadResponse where Success == any Sendable, Failure == AFError {
    /// This response typed as Alamofire's `responseJSON` hands it over.
    fileprivate var typedAsAny: AFDownloadResponse<Any> {
        unsafeBitCast(self, to: AFDownloadResponse<Any>.self)
    }
}

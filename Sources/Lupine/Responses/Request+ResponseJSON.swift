import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// `responseJSON`, deprecated in Alamofire 5.12 and kept so that older code keeps compiling. The
// value is `any Sendable` where Alamofire says `Any` (see `JSONResponseSerializer`): a closure
// that reads it (`response.value as? [String: Any]`) compiles unchanged.

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
                             completionHandler: @escaping @Sendable (AFDataResponse<any Sendable>) -> Void) -> Self {
        response(queue: queue,
                 responseSerializer: JSONResponseSerializer(dataPreprocessor: dataPreprocessor,
                                                            emptyResponseCodes: emptyResponseCodes,
                                                            emptyRequestMethods: emptyRequestMethods,
                                                            options: options),
                 completionHandler: completionHandler)
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
                             completionHandler: @escaping @Sendable (AFDownloadResponse<any Sendable>) -> Void) -> Self {
        response(queue: queue,
                 responseSerializer: JSONResponseSerializer(dataPreprocessor: dataPreprocessor,
                                                            emptyResponseCodes: emptyResponseCodes,
                                                            emptyRequestMethods: emptyRequestMethods,
                                                            options: options),
                 completionHandler: completionHandler)
    }
}

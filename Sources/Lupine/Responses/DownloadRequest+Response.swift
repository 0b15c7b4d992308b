import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DownloadRequest {
    /// Calls `completionHandler` with the unserialized response: `.success(fileURL)` (nil when no
    /// file was produced) or `.failure(error)`.
    ///
    /// - Parameters:
    ///   - queue:             Where `completionHandler` runs: `.main` on Apple platforms, the
    ///                        Session's serial queue on Linux, unless given.
    ///   - completionHandler: Receives the `AFDownloadResponse<URL?>`.
    @preconcurrency
    @discardableResult
    public func response(queue: DispatchQueue = .lupineDefault,
                         completionHandler: @escaping @Sendable (AFDownloadResponse<URL?>) -> Void) -> Self {
        ResponseHandler.append(to: self, reading: UnserializedDownloadReading(), queue: queue, completionHandler: completionHandler)
        return self
    }

    /// Serializes the download with `responseSerializer` on the serialization queue, then calls
    /// `completionHandler` on `queue`. A serializer error that is not an `AFError` becomes
    /// `.responseSerializationFailed(reason: .customSerializationFailed(error:))`; a serialization
    /// failure also asks the retriers, and a retry calls the handler with the retried outcome.
    @discardableResult
    public func response<Serializer: DownloadResponseSerializerProtocol>(queue: DispatchQueue = .lupineDefault,
                                                                         responseSerializer: Serializer,
                                                                         completionHandler: @escaping @Sendable (AFDownloadResponse<Serializer.SerializedObject>) -> Void)
        -> Self {
        ResponseHandler.append(to: self, reading: DownloadResponseReading(serializer: responseSerializer), queue: queue, completionHandler: completionHandler)
        return self
    }

    /// Same, for a `ResponseSerializer` (it serializes the file's contents).
    @discardableResult
    public func response<Serializer: ResponseSerializer>(queue: DispatchQueue = .lupineDefault,
                                                         responseSerializer: Serializer,
                                                         completionHandler: @escaping @Sendable (AFDownloadResponse<Serializer.SerializedObject>) -> Void)
        -> Self {
        response(queue: queue, responseSerializer: AnyDownloadResponseSerializer(responseSerializer), completionHandler: completionHandler)
    }

    /// The downloaded file's URL (`URLResponseSerializer`); fails with `.inputFileNil` without a file.
    @preconcurrency
    @discardableResult
    public func responseURL(queue: DispatchQueue = .lupineDefault,
                            completionHandler: @escaping @Sendable (AFDownloadResponse<URL>) -> Void) -> Self {
        response(queue: queue, responseSerializer: URLResponseSerializer(), completionHandler: completionHandler)
    }

    /// The file's contents as `Data` (the whole file is read into memory; see `DataResponseSerializer`).
    @preconcurrency
    @discardableResult
    public func responseData(queue: DispatchQueue = .lupineDefault,
                             dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
                             emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
                             emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods,
                             completionHandler: @escaping @Sendable (AFDownloadResponse<Data>) -> Void) -> Self {
        response(queue: queue,
                 responseSerializer: DataResponseSerializer(dataPreprocessor: dataPreprocessor,
                                                            emptyResponseCodes: emptyResponseCodes,
                                                            emptyRequestMethods: emptyRequestMethods),
                 completionHandler: completionHandler)
    }

    /// The file's contents as `String` (encoding: explicit, else from the response, else ISO Latin 1).
    @preconcurrency
    @discardableResult
    public func responseString(queue: DispatchQueue = .lupineDefault,
                               dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
                               encoding: String.Encoding? = nil,
                               emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
                               emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods,
                               completionHandler: @escaping @Sendable (AFDownloadResponse<String>) -> Void) -> Self {
        response(queue: queue,
                 responseSerializer: StringResponseSerializer(dataPreprocessor: dataPreprocessor,
                                                              encoding: encoding,
                                                              emptyResponseCodes: emptyResponseCodes,
                                                              emptyRequestMethods: emptyRequestMethods),
                 completionHandler: completionHandler)
    }

    /// The file's contents decoded as `T` with `decoder`.
    @preconcurrency
    @discardableResult
    public func responseDecodable<T: Decodable>(of type: T.Type = T.self,
                                                queue: DispatchQueue = .lupineDefault,
                                                dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<T>.defaultDataPreprocessor,
                                                decoder: any DataDecoder = JSONDecoder(),
                                                emptyResponseCodes: Set<Int> = DecodableResponseSerializer<T>.defaultEmptyResponseCodes,
                                                emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<T>.defaultEmptyRequestMethods,
                                                completionHandler: @escaping @Sendable (AFDownloadResponse<T>) -> Void) -> Self where T: Sendable {
        response(queue: queue,
                 responseSerializer: DecodableResponseSerializer(dataPreprocessor: dataPreprocessor,
                                                                 decoder: decoder,
                                                                 emptyResponseCodes: emptyResponseCodes,
                                                                 emptyRequestMethods: emptyRequestMethods),
                 completionHandler: completionHandler)
    }
}

/// Lets the two public generic `response(queue:responseSerializer:...)` overloads share one implementation.
struct AnyDownloadResponseSerializer<Value: Sendable>: DownloadResponseSerializerProtocol {
    let base: any DownloadResponseSerializerProtocol<Value>

    init(_ base: any DownloadResponseSerializerProtocol<Value>) { self.base = base }

    func serializeDownload(request: URLRequest?, response: HTTPURLResponse?, fileURL: URL?, error: (any Error)?) throws -> Value {
        try base.serializeDownload(request: request, response: response, fileURL: fileURL, error: error)
    }
}

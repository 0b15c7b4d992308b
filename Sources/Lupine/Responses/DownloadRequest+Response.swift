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
        let queue = queue.resolvingLupineDefault(to: defaultQueue)
        appendResponseSerializer(startsOnCallingThread: queue === DispatchQueue.lupineInline) {
            self.onUnderlyingQueue {
                let result: AFResult<URL?> = self.error.map { .failure($0) } ?? .success(self.fileURL)
                let response = DownloadResponse(request: self.request, response: self.response, fileURL: self.fileURL,
                                                resumeData: self.resumeData, metrics: nil, serializationDuration: 0,
                                                result: result, timeline: self.timeline.serialized(at: Date()))
                self.notify(.didParseDownloadResponse) { $0.request(self, didParseResponse: response) }
                self.responseSerializerDidComplete { queue.lupineAsync { completionHandler(response) } }
            }
        }
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
        let queue = queue.resolvingLupineDefault(to: defaultQueue)
        appendResponseSerializer(startsOnCallingThread: queue === DispatchQueue.lupineInline) {
            self.onSerializationQueue {
                let start = Date()
                let request = self.request, response = self.response, fileURL = self.fileURL, error = self.error
                let resumeData = self.resumeData
                let result = Result<Serializer.SerializedObject, any Error> {
                    try responseSerializer.serializeDownload(request: request, response: response, fileURL: fileURL, error: error)
                }.mapError { error -> AFError in
                    error.asAFError ?? .responseSerializationFailed(reason: .customSerializationFailed(error: error))
                }
                let end = Date()
                self.onUnderlyingQueue {
                    let downloadResponse = DownloadResponse(request: request, response: response, fileURL: fileURL,
                                                            resumeData: resumeData, metrics: nil,
                                                            serializationDuration: end.timeIntervalSince(start),
                                                            result: result, timeline: self.timeline.serialized(at: end))
                    self.notify(.didParseSerializedDownloadResponse) { $0.request(self, didParseResponse: downloadResponse) }
                    self.completeSerialization(failure: downloadResponse.error) { replacement in
                        let delivered = replacement.map { error in
                            DownloadResponse(request: request, response: response, fileURL: fileURL,
                                             resumeData: resumeData, metrics: nil,
                                             serializationDuration: downloadResponse.serializationDuration,
                                             result: AFResult<Serializer.SerializedObject>.failure(error),
                                             timeline: downloadResponse.timeline)
                        } ?? downloadResponse
                        queue.lupineAsync { completionHandler(delivered) }
                    }
                }
            }
        }
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

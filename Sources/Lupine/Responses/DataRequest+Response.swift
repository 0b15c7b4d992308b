import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DataRequest {
    /// Calls `completionHandler` on `queue` with the unserialized response: `.success(data)` (nil
    /// when no body arrived) or `.failure(error)`.
    @preconcurrency
    @discardableResult
    public func response(queue: DispatchQueue = .lupineDefault, completionHandler: @escaping @Sendable (AFDataResponse<Data?>) -> Void) -> Self {
        let queue = queue.resolvingLupineDefault(to: defaultQueue)
        appendResponseSerializer(startsOnCallingThread: queue === DispatchQueue.lupineInline) {
            self.onUnderlyingQueue {
                let error = self.error
                let result: AFResult<Data?> = error.map { .failure($0) } ?? .success(self.data)
                let response = DataResponse(request: self.request, responseSource: .lazy(self.lazyResponse), data: self.data, metrics: nil,
                                            serializationDuration: 0, result: result,
                                            timeline: self.timeline.serialized(at: Date()))
                self.notify(.didParseDataResponse) { $0.request(self, didParseResponse: response) }
                self.responseSerializerDidComplete { queue.lupineAsync { completionHandler(response) } }
            }
        }
        return self
    }

    /// Serializes the response with `responseSerializer` on the serialization queue, then calls
    /// `completionHandler` on `queue`. A serializer error that is not an `AFError` becomes
    /// `.responseSerializationFailed(reason: .customSerializationFailed(error:))`; a serialization
    /// failure also asks the retriers, and a retry calls the handler with the retried outcome.
    @preconcurrency
    @discardableResult
    public func response<Serializer: DataResponseSerializerProtocol>(queue: DispatchQueue = .lupineDefault,
                                                                     responseSerializer: Serializer,
                                                                     completionHandler: @escaping @Sendable (AFDataResponse<Serializer.SerializedObject>) -> Void)
        -> Self {
        let queue = queue.resolvingLupineDefault(to: defaultQueue)
        appendResponseSerializer(startsOnCallingThread: queue === DispatchQueue.lupineInline) {
            self.onSerializationQueue {
                let start = Date()
                let request = self.request, lazyResponse = self.lazyResponse, data = self.data, error = self.error
                // Lupine's data and decodable serializers read the response only for an empty body.
                let response = ResponseSerializerReads.response(of: responseSerializer, data: data) ? lazyResponse?.response : nil
                let result = Result<Serializer.SerializedObject, any Error> {
                    try responseSerializer.serialize(request: request, response: response, data: data, error: error)
                }.mapError { error -> AFError in
                    error.asAFError ?? .responseSerializationFailed(reason: .customSerializationFailed(error: error))
                }
                let end = Date()
                self.onUnderlyingQueue {
                    let dataResponse = DataResponse(request: request, responseSource: .lazy(lazyResponse), data: data, metrics: nil,
                                                    serializationDuration: end.timeIntervalSince(start), result: result,
                                                    timeline: self.timeline.serialized(at: end))
                    self.notify(.didParseSerializedDataResponse) { $0.request(self, didParseResponse: dataResponse) }
                    self.completeSerialization(failure: dataResponse.error) { replacement in
                        let delivered = replacement.map { error in
                            DataResponse(request: request, responseSource: .lazy(lazyResponse), data: data, metrics: nil,
                                         serializationDuration: dataResponse.serializationDuration,
                                         result: AFResult<Serializer.SerializedObject>.failure(error),
                                         timeline: dataResponse.timeline)
                        } ?? dataResponse
                        queue.lupineAsync { completionHandler(delivered) }
                    }
                }
            }
        }
        return self
    }

    /// Same, for a `ResponseSerializer` (disambiguation overload).
    @preconcurrency
    @discardableResult
    public func response<Serializer: ResponseSerializer>(queue: DispatchQueue = .lupineDefault,
                                                         responseSerializer: Serializer,
                                                         completionHandler: @escaping @Sendable (AFDataResponse<Serializer.SerializedObject>) -> Void)
        -> Self {
        response(queue: queue, responseSerializer: AnyDataResponseSerializer(responseSerializer), completionHandler: completionHandler)
    }

    /// Body as `Data` (see `DataResponseSerializer` for the empty-body rules).
    @preconcurrency
    @discardableResult
    public func responseData(queue: DispatchQueue = .lupineDefault,
                             dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
                             emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
                             emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods,
                             completionHandler: @escaping @Sendable (AFDataResponse<Data>) -> Void) -> Self {
        response(queue: queue,
                 responseSerializer: DataResponseSerializer(dataPreprocessor: dataPreprocessor,
                                                            emptyResponseCodes: emptyResponseCodes,
                                                            emptyRequestMethods: emptyRequestMethods),
                 completionHandler: completionHandler)
    }

    /// Body as `String` (encoding: explicit, else from the response, else ISO Latin 1).
    @preconcurrency
    @discardableResult
    public func responseString(queue: DispatchQueue = .lupineDefault,
                               dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
                               encoding: String.Encoding? = nil,
                               emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
                               emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods,
                               completionHandler: @escaping @Sendable (AFDataResponse<String>) -> Void) -> Self {
        response(queue: queue,
                 responseSerializer: StringResponseSerializer(dataPreprocessor: dataPreprocessor,
                                                              encoding: encoding,
                                                              emptyResponseCodes: emptyResponseCodes,
                                                              emptyRequestMethods: emptyRequestMethods),
                 completionHandler: completionHandler)
    }

    /// Body decoded as `Value` with `decoder`.
    @preconcurrency
    @discardableResult
    public func responseDecodable<Value>(of type: Value.Type = Value.self,
                                         queue: DispatchQueue = .lupineDefault,
                                         dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<Value>.defaultDataPreprocessor,
                                         decoder: any DataDecoder = JSONDecoder(),
                                         emptyResponseCodes: Set<Int> = DecodableResponseSerializer<Value>.defaultEmptyResponseCodes,
                                         emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<Value>.defaultEmptyRequestMethods,
                                         completionHandler: @escaping @Sendable (AFDataResponse<Value>) -> Void) -> Self where Value: Decodable, Value: Sendable {
        response(queue: queue,
                 responseSerializer: DecodableResponseSerializer(dataPreprocessor: dataPreprocessor,
                                                                 decoder: decoder,
                                                                 emptyResponseCodes: emptyResponseCodes,
                                                                 emptyRequestMethods: emptyRequestMethods),
                 completionHandler: completionHandler)
    }
}

/// Lets the two public `response(queue:responseSerializer:...)` overloads share one implementation.
struct AnyDataResponseSerializer<Value: Sendable>: DataResponseSerializerProtocol, WrapsResponseSerializer {
    let base: any DataResponseSerializerProtocol<Value>

    var wrapped: Any { base }

    init(_ base: any DataResponseSerializerProtocol<Value>) { self.base = base }

    func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> Value {
        try base.serialize(request: request, response: response, data: data, error: error)
    }
}

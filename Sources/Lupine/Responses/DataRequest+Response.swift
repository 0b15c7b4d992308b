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
        ResponseHandler.append(to: self, reading: UnserializedDataReading(), queue: queue, completionHandler: completionHandler)
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
        ResponseHandler.append(to: self, reading: DataResponseReading(serializer: responseSerializer), queue: queue, completionHandler: completionHandler)
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
        // Straight to the handler with the serializer's own type: the `ResponseSerializer`
        // overload of `response(queue:responseSerializer:)` would wrap it (an allocation, a cast
        // that boxes it, and unspecialized generic code on every response).
        let serializer = DataResponseSerializer.reusable(dataPreprocessor: dataPreprocessor,
                                                         emptyResponseCodes: emptyResponseCodes,
                                                         emptyRequestMethods: emptyRequestMethods)
        ResponseHandler.append(to: self, reading: DataResponseReading(serializer: serializer), queue: queue,
                               completionHandler: completionHandler)
        return self
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
        // Straight to the handler, unwrapped, as in `responseData`.
        let serializer = StringResponseSerializer(dataPreprocessor: dataPreprocessor,
                                                  encoding: encoding,
                                                  emptyResponseCodes: emptyResponseCodes,
                                                  emptyRequestMethods: emptyRequestMethods)
        ResponseHandler.append(to: self, reading: DataResponseReading(serializer: serializer), queue: queue,
                               completionHandler: completionHandler)
        return self
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
        // Straight to the handler, unwrapped, as in `responseData`.
        let serializer = DecodableResponseSerializer<Value>(dataPreprocessor: dataPreprocessor,
                                                            decoder: decoder,
                                                            emptyResponseCodes: emptyResponseCodes,
                                                            emptyRequestMethods: emptyRequestMethods)
        ResponseHandler.append(to: self, reading: DataResponseReading(serializer: serializer), queue: queue,
                               completionHandler: completionHandler)
        return self
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

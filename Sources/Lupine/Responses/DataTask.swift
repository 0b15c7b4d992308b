import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An awaitable handle on the serialized response of a DataRequest (made by `serializing...`).
@available(macOS 10.15, iOS 13, tvOS 13, watchOS 6, *)
public struct DataTask<Value>: Sendable where Value: Sendable {
    /// The full response; may be awaited any number of times. With automatic cancellation, the
    /// request is cancelled when the awaiting task is.
    // Inlinable: the caller's code is then specialized for its `Value`, instead of looking up the
    // metadata of the generic response and result types on every await.
    @inlinable
    public var response: DataResponse<Value, AFError> {
        get async {
            guard shouldAutomaticallyCancel else { return await pending.value }
            return await withTaskCancellationHandler {
                await pending.value
            } onCancel: {
                cancel()
            }
        }
    }

    /// `response.result`.
    @inlinable
    public var result: Result<Value, AFError> {
        get async { await response.result }
    }

    /// The success value, or throws the `AFError`.
    @inlinable
    public var value: Value {
        get async throws { try await result.get() }
    }

    private let request: DataRequest
    @usableFromInline let pending: PendingResponse<DataResponse<Value, AFError>>
    @usableFromInline let shouldAutomaticallyCancel: Bool

    init(request: DataRequest, pending: PendingResponse<DataResponse<Value, AFError>>, shouldAutomaticallyCancel: Bool) {
        self.request = request
        self.pending = pending
        self.shouldAutomaticallyCancel = shouldAutomaticallyCancel
    }

    /// Cancels the task and the request.
    public func cancel() {
        request.cancel()
    }

    /// Resumes the request.
    public func resume() {
        request.resume()
    }

    /// Suspends the request.
    public func suspend() {
        request.suspend()
    }
}

@available(macOS 10.15, iOS 13, tvOS 13, watchOS 6, *)
extension DataRequest {
    /// Awaitable `Data` body (see `DataResponseSerializer`).
    public func serializingData(automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
                                dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
                                emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
                                emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods) -> DataTask<Data> {
        serializingResponse(using: DataResponseSerializer.reusable(dataPreprocessor: dataPreprocessor,
                                                                   emptyResponseCodes: emptyResponseCodes,
                                                                   emptyRequestMethods: emptyRequestMethods),
                            automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// Awaitable body decoded as `Value`.
    public func serializingDecodable<Value: Decodable>(_ type: Value.Type = Value.self,
                                                       automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
                                                       dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<Value>.defaultDataPreprocessor,
                                                       decoder: any DataDecoder = JSONDecoder(),
                                                       emptyResponseCodes: Set<Int> = DecodableResponseSerializer<Value>.defaultEmptyResponseCodes,
                                                       emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<Value>.defaultEmptyRequestMethods) -> DataTask<Value> {
        serializingResponse(using: DecodableResponseSerializer<Value>(dataPreprocessor: dataPreprocessor,
                                                                      decoder: decoder,
                                                                      emptyResponseCodes: emptyResponseCodes,
                                                                      emptyRequestMethods: emptyRequestMethods),
                            automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// Awaitable body as `String`.
    public func serializingString(automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
                                  dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
                                  encoding: String.Encoding? = nil,
                                  emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
                                  emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods) -> DataTask<String> {
        serializingResponse(using: StringResponseSerializer(dataPreprocessor: dataPreprocessor,
                                                            encoding: encoding,
                                                            emptyResponseCodes: emptyResponseCodes,
                                                            emptyRequestMethods: emptyRequestMethods),
                            automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// Awaitable response serialized by `serializer`.
    public func serializingResponse<Serializer: ResponseSerializer>(using serializer: Serializer,
                                                                    automaticallyCancelling shouldAutomaticallyCancel: Bool = true)
        -> DataTask<Serializer.SerializedObject> {
        serializing(with: serializer, automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// Awaitable response serialized by `serializer`.
    public func serializingResponse<Serializer: DataResponseSerializerProtocol>(using serializer: Serializer,
                                                                                automaticallyCancelling shouldAutomaticallyCancel: Bool = true)
        -> DataTask<Serializer.SerializedObject> {
        serializing(with: serializer, automaticallyCancelling: shouldAutomaticallyCancel)
    }

    private func serializing<Serializer: DataResponseSerializerProtocol>(with serializer: Serializer, automaticallyCancelling shouldAutomaticallyCancel: Bool)
        -> DataTask<Serializer.SerializedObject> {
        // The handler is registered now (which may resume the request); it is the
        // `PendingResponse` that whoever awaits the task waits on.
        if shouldAutomaticallyCancel, Task.isCancelled { cancel() }
        let pending = ResponseHandler.appendAwaited(to: self, reading: DataResponseReading(serializer: serializer))
        return DataTask(request: self, pending: pending, shouldAutomaticallyCancel: shouldAutomaticallyCancel)
    }
}

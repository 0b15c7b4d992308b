import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An awaitable handle on the serialized response of a DownloadRequest (made by `serializing...`).
@available(macOS 10.15, iOS 13, tvOS 13, watchOS 6, *)
public struct DownloadTask<Value>: Sendable where Value: Sendable {
    /// The full response; may be awaited any number of times. With automatic cancellation, the
    /// request is cancelled when the awaiting task is.
    // Inlinable: the caller's code is then specialized for its `Value`, instead of looking up the
    // metadata of the generic response and result types on every await.
    @inlinable
    public var response: DownloadResponse<Value, AFError> {
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

    private let request: DownloadRequest
    @usableFromInline let pending: PendingResponse<AFDownloadResponse<Value>>
    @usableFromInline let shouldAutomaticallyCancel: Bool

    init(request: DownloadRequest, pending: PendingResponse<AFDownloadResponse<Value>>, shouldAutomaticallyCancel: Bool) {
        self.request = request
        self.pending = pending
        self.shouldAutomaticallyCancel = shouldAutomaticallyCancel
    }

    /// Cancels the task and the download (without resume data).
    public func cancel() {
        request.cancel()
    }

    /// Resumes the download.
    public func resume() {
        request.resume()
    }

    /// Suspends the download.
    public func suspend() {
        request.suspend()
    }
}

@available(macOS 10.15, iOS 13, tvOS 13, watchOS 6, *)
extension DownloadRequest {
    /// Awaitable file contents as `Data` (see `DataResponseSerializer`).
    public func serializingData(automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
                                dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
                                emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
                                emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods) -> DownloadTask<Data> {
        serializingDownload(using: DataResponseSerializer(dataPreprocessor: dataPreprocessor,
                                                          emptyResponseCodes: emptyResponseCodes,
                                                          emptyRequestMethods: emptyRequestMethods),
                            automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// Awaitable file contents decoded as `Value`.
    public func serializingDecodable<Value: Decodable>(_ type: Value.Type = Value.self,
                                                       automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
                                                       dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<Value>.defaultDataPreprocessor,
                                                       decoder: any DataDecoder = JSONDecoder(),
                                                       emptyResponseCodes: Set<Int> = DecodableResponseSerializer<Value>.defaultEmptyResponseCodes,
                                                       emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<Value>.defaultEmptyRequestMethods) -> DownloadTask<Value> {
        serializingDownload(using: DecodableResponseSerializer<Value>(dataPreprocessor: dataPreprocessor,
                                                                      decoder: decoder,
                                                                      emptyResponseCodes: emptyResponseCodes,
                                                                      emptyRequestMethods: emptyRequestMethods),
                            automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// Awaitable URL of the downloaded file (`URLResponseSerializer`).
    public func serializingDownloadedFileURL(automaticallyCancelling shouldAutomaticallyCancel: Bool = true) -> DownloadTask<URL> {
        serializingDownload(using: URLResponseSerializer(), automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// Awaitable file contents as `String`.
    public func serializingString(automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
                                  dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
                                  encoding: String.Encoding? = nil,
                                  emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
                                  emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods) -> DownloadTask<String> {
        serializingDownload(using: StringResponseSerializer(dataPreprocessor: dataPreprocessor,
                                                            encoding: encoding,
                                                            emptyResponseCodes: emptyResponseCodes,
                                                            emptyRequestMethods: emptyRequestMethods),
                            automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// Awaitable download serialized by `serializer`.
    public func serializingDownload<Serializer: ResponseSerializer>(using serializer: Serializer,
                                                                    automaticallyCancelling shouldAutomaticallyCancel: Bool = true)
        -> DownloadTask<Serializer.SerializedObject> {
        serializing(with: serializer, automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// Awaitable download serialized by `serializer`.
    public func serializingDownload<Serializer: DownloadResponseSerializerProtocol>(using serializer: Serializer,
                                                                                    automaticallyCancelling shouldAutomaticallyCancel: Bool = true)
        -> DownloadTask<Serializer.SerializedObject> {
        serializing(with: serializer, automaticallyCancelling: shouldAutomaticallyCancel)
    }

    private func serializing<Serializer: DownloadResponseSerializerProtocol>(with serializer: Serializer, automaticallyCancelling shouldAutomaticallyCancel: Bool)
        -> DownloadTask<Serializer.SerializedObject> {
        // The handler is registered now (which may resume the request); it is the
        // `PendingResponse` that whoever awaits the task waits on.
        if shouldAutomaticallyCancel, Task.isCancelled { cancel() }
        let pending = ResponseHandler.appendAwaited(to: self, reading: DownloadResponseReading(serializer: serializer))
        return DownloadTask(request: self, pending: pending, shouldAutomaticallyCancel: shouldAutomaticallyCancel)
    }
}

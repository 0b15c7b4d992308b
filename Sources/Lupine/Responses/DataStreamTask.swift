import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Vends the events of a `DataStreamRequest` as async sequences (made by `streamTask()`).
///
/// Each stream adds its own handler to the request and ends right after yielding `.complete`.
/// Events are produced on a serial queue of the request's own, and backpressure reaches the
/// socket: a chunk counts as handled only once the iterator has taken it, so a slow loop slows
/// the transfer (with `.unbounded` buffering too). With automatic cancellation, ending the
/// iteration early (breaking out of the loop, or the task being cancelled) cancels the request
/// if it is still initialized, resumed or suspended.
@available(macOS 10.15, iOS 13, tvOS 13, watchOS 6, *)
public struct DataStreamTask: Sendable {
    /// The sequence of stream events for `Success` and `Failure`.
    public typealias Stream<Success, Failure: Error> = StreamOf<DataStreamRequest.Stream<Success, Failure>>

    private let request: DataStreamRequest

    init(request: DataStreamRequest) {
        self.request = request
    }

    /// Each chunk as received, then `.complete`.
    public func streamingData(automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
                              bufferingPolicy: Stream<Data, Never>.BufferingPolicy = .unbounded) -> Stream<Data, Never> {
        makeStream(automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy) { request, queue, handler in
            request.addStreamHandler(on: queue, serialize: { data, emit in emit(.success(data)) }, handler: handler)
        }
    }

    /// Each chunk decoded as UTF-8, then `.complete`.
    public func streamingStrings(automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
                                 bufferingPolicy: Stream<String, Never>.BufferingPolicy = .unbounded) -> Stream<String, Never> {
        makeStream(automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy) { request, queue, handler in
            request.addStreamHandler(on: queue, serialize: request.decodingStrings(), handler: handler)
        }
    }

    /// Each chunk decoded as `T` with a `JSONDecoder`, then `.complete`.
    public func streamingDecodables<T>(_ type: T.Type = T.self,
                                       automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
                                       bufferingPolicy: Stream<T, AFError>.BufferingPolicy = .unbounded)
        -> Stream<T, AFError> where T: Decodable & Sendable {
        streamingResponses(serializedUsing: DecodableStreamSerializer<T>(),
                           automaticallyCancelling: shouldAutomaticallyCancel,
                           bufferingPolicy: bufferingPolicy)
    }

    /// Each chunk passed through `serializer`, then `.complete`.
    public func streamingResponses<Serializer: DataStreamSerializer>(serializedUsing serializer: Serializer,
                                                                     automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
                                                                     bufferingPolicy: Stream<Serializer.SerializedObject, AFError>.BufferingPolicy = .unbounded)
        -> Stream<Serializer.SerializedObject, AFError> {
        makeStream(automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy) { request, queue, handler in
            request.addStreamHandler(on: queue, serialize: request.serializing(with: serializer), handler: handler)
        }
    }

    /// Cancels the request.
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

    typealias DeferredHandler<Success: Sendable, Failure: Error & Sendable> =
        @Sendable (DataStreamRequest.Stream<Success, Failure>, _ done: @escaping @Sendable () -> Void) throws -> Void

    /// A stream whose every iteration adds a handler (through `install`) that yields into it.
    func makeStream<Success: Sendable, Failure: Error & Sendable>(
        automaticallyCancelling shouldAutomaticallyCancel: Bool,
        bufferingPolicy: Stream<Success, Failure>.BufferingPolicy,
        install: @escaping (DataStreamRequest, DispatchQueue, @escaping DeferredHandler<Success, Failure>) -> Void
    ) -> Stream<Success, Failure> {
        let request = request
        return StreamOf.observingConsumption(bufferingPolicy: bufferingPolicy, onTermination: {
            guard shouldAutomaticallyCancel, request.isInitialized || request.isResumed || request.isSuspended else { return }
            request.cancel()
        }, builder: { continuation in
            let buffered = BufferedDeliveries(bufferingPolicy: bufferingPolicy)
            let endIteration = continuation.onTermination
            // Chunks still buffered when the iteration ends count as handled, so reading resumes.
            continuation.onTermination = { termination in
                buffered.releaseAll()
                endIteration?(termination)
            }
            let box = ContinuationBox(continuation)
            install(request, request.streamCompletionQueue) { stream, done in
                buffered.yield(stream, into: box.continuation, done: done)
                if case .complete = stream.event { box.continuation.finish() }
            }
            return { buffered.releaseOldest() }
        })
    }
}

@available(macOS 10.15, iOS 13, tvOS 13, watchOS 6, *)
extension DataStreamRequest {
    /// Every final HTTPURLResponse received (one per attempt); installs an `onHTTPResponse`
    /// handler, replacing any other, and ends when the request finishes.
    public func httpResponses(bufferingPolicy: StreamOf<HTTPURLResponse>.BufferingPolicy = .unbounded) -> StreamOf<HTTPURLResponse> {
        stream(bufferingPolicy: bufferingPolicy) { [unowned self] continuation in
            onHTTPResponse(on: underlyingQueue) { continuation.yield($0) }
        }
    }

    /// Awaits `handler`'s decision for each final HTTPURLResponse: `.allow` continues, `.cancel`
    /// cancels the request. The body waits for the decision.
    @_disfavoredOverload
    @discardableResult
    public func onHTTPResponse(perform handler: @escaping @Sendable (HTTPURLResponse) async -> ResponseDisposition) -> Self {
        onHTTPResponse(on: underlyingQueue) { response, completionHandler in
            Task {
                let disposition = await handler(response)
                completionHandler(disposition)
            }
        }
    }

    /// Runs `handler` for each final HTTPURLResponse (observation only; the body waits for it).
    @discardableResult
    public func onHTTPResponse(perform handler: @escaping @Sendable (HTTPURLResponse) async -> Void) -> Self {
        onHTTPResponse { response in
            await handler(response)
            return .allow
        }
    }

    /// The async sequences of this request's stream events.
    public func streamTask() -> DataStreamTask {
        DataStreamTask(request: self)
    }
}

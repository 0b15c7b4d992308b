import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The async interface of a `WebSocketRequest` (made by `webSocketTask()`).
///
/// Each stream adds its own handler to the request and ends after the `.completed` event. A
/// message counts as taken once the iteration has taken it (or the buffering policy dropped it),
/// so a loop that falls behind pauses reading from the socket: with the default `.unbounded`
/// policy the buffer still holds no more than the request's backlog bound. With
/// automatic cancellation, ending the iteration early (breaking out of the loop, or the task
/// being cancelled) cancels the request if it is still initialized, resumed or suspended.
public struct WebSocketTask: Sendable {
    /// A sequence of WebSocket events.
    public typealias EventStreamOf<Success: Sendable, Failure: Error> = StreamOf<WebSocketRequest.Event<Success, Failure>>

    private let request: WebSocketRequest

    init(request: WebSocketRequest) {
        self.request = request
    }

    /// Every event, messages as they arrived.
    public func streamingMessageEvents(automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
                                       bufferingPolicy: EventStreamOf<URLSessionWebSocketTask.Message, Never>.BufferingPolicy = .unbounded)
        -> EventStreamOf<URLSessionWebSocketTask.Message, Never> {
        makeStream(automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy, transform: { $0 }) { request, queue, onEvent in
            request.addMessageEventHandler(on: queue, handler: onEvent)
        }
    }

    /// The messages only; the sequence ends when the request finishes.
    public func streamingMessages(automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
                                  bufferingPolicy: StreamOf<URLSessionWebSocketTask.Message>.BufferingPolicy = .unbounded)
        -> StreamOf<URLSessionWebSocketTask.Message> {
        makeStream(automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy, transform: { $0.message }) { request, queue, onEvent in
            request.addMessageEventHandler(on: queue, handler: onEvent)
        }
    }

    /// Every event, messages decoded as JSON of type `Value`.
    public func streamingDecodableEvents<Value: Decodable & Sendable>(_ type: Value.Type = Value.self,
                                                                      automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
                                                                      using decoder: any DataDecoder = JSONDecoder(),
                                                                      bufferingPolicy: EventStreamOf<Value, any Error>.BufferingPolicy = .unbounded)
        -> EventStreamOf<Value, any Error> {
        makeStream(automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy, transform: { $0 }) { request, queue, onEvent in
            request.addSerializedEventHandler(DecodableWebSocketMessageDecoder<Value>(decoder: decoder), on: queue, handler: onEvent)
        }
    }

    /// The messages that decode as JSON of type `Value`; the others are skipped.
    public func streamingDecodable<Value: Decodable & Sendable>(_ type: Value.Type = Value.self,
                                                                automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
                                                                using decoder: any DataDecoder = JSONDecoder(),
                                                                bufferingPolicy: StreamOf<Value>.BufferingPolicy = .unbounded)
        -> StreamOf<Value> {
        makeStream(automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy, transform: { $0.message }) { request, queue, onEvent in
            request.addSerializedEventHandler(DecodableWebSocketMessageDecoder<Value>(decoder: decoder), on: queue, handler: onEvent)
        }
    }

    /// Sends `message` once the connection is open.
    ///
    /// - Throws: the `AFError` of `WebSocketRequest.send(_:queue:completionHandler:)`.
    public func send(_ message: URLSessionWebSocketTask.Message) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            request.send(message, queue: request.streamCompletionQueue) { result in
                continuation.resume(with: result)
            }
        }
    }

    /// Closes with a close handshake, as `WebSocketRequest.close(sending:reason:)`: the request
    /// then completes without an error.
    public func close(sending closeCode: URLSessionWebSocketTask.CloseCode, reason: Data? = nil) {
        request.close(sending: closeCode, reason: reason)
    }

    /// Cancels the request: it completes with `AFError.explicitlyCancelled`.
    public func cancel() {
        request.cancel()
    }

    /// Resumes the request.
    public func resume() {
        request.resume()
    }

    /// Suspends the request (before the connection opens, the handshake waits).
    public func suspend() {
        request.suspend()
    }

    private func makeStream<Success: Sendable, Failure: Error, Value: Sendable>(
        automaticallyCancelling shouldAutomaticallyCancel: Bool,
        bufferingPolicy: StreamOf<Value>.BufferingPolicy,
        transform: @escaping @Sendable (WebSocketRequest.Event<Success, Failure>) -> Value?,
        install: @escaping (WebSocketRequest, DispatchQueue,
                            @escaping @Sendable (WebSocketRequest.Event<Success, Failure>, _ taken: @escaping @Sendable () -> Void) -> Void) -> Void
    ) -> StreamOf<Value> {
        let request = request
        return StreamOf.observingConsumption(bufferingPolicy: bufferingPolicy, onTermination: {
            guard shouldAutomaticallyCancel, request.isInitialized || request.isResumed || request.isSuspended else { return }
            request.cancel()
        }, builder: { continuation in
            let buffered = BufferedDeliveries<Value>(bufferingPolicy: bufferingPolicy)
            let endIteration = continuation.onTermination
            // Messages still buffered when the iteration ends count as taken, so reading resumes.
            continuation.onTermination = { termination in
                buffered.releaseAll()
                endIteration?(termination)
            }
            let box = ContinuationBox(continuation)
            install(request, request.streamCompletionQueue) { event, taken in
                if let value = transform(event) {
                    buffered.yield(value, into: box.continuation, done: taken)
                } else {
                    taken()
                }
                if case .completed = event.kind { box.continuation.finish() }
            }
            return { buffered.releaseOldest() }
        })
    }
}

extension WebSocketRequest {
    /// The async interface of this request.
    public func webSocketTask() -> WebSocketTask {
        WebSocketTask(request: self)
    }
}

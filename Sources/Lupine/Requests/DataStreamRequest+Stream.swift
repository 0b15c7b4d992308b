import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DataStreamRequest {
    /// What a stream handler receives: one event, and a token that can cancel the request.
    public struct Stream<Success, Failure: Error>: Sendable where Success: Sendable, Failure: Sendable {
        /// The event carried: a chunk (or a value serialized from one), or the completion.
        public let event: Event<Success, Failure>
        /// Cancels the request from inside the handler.
        public let token: CancellationToken

        init(event: Event<Success, Failure>, token: CancellationToken) {
            self.event = event
            self.token = token
        }

        /// Cancels the request, as `token.cancel()` does.
        public func cancel() {
            token.cancel()
        }
    }

    /// The kinds of stream events.
    public enum Event<Success, Failure: Error>: Sendable where Success: Sendable, Failure: Sendable {
        /// A chunk arrived: the chunk itself, or what a `DataStreamSerializer` made of it.
        case stream(Result<Success, Failure>)
        /// The request finished. Sent once per handler, after every `.stream` event of that handler
        /// has been handled.
        case complete(Completion)
    }

    /// The request as it was when it finished.
    public struct Completion: Sendable {
        /// The last URLRequest sent, if any.
        public let request: URLRequest?
        /// The last response received, if any.
        public let response: HTTPURLResponse?
        /// Always nil: URLSession metrics do not exist on this transport; see `Request.timeline`.
        public let metrics: URLSessionTaskMetrics?
        /// The request's error: transport, validation, cancellation, or an error a handler threw.
        public let error: AFError?

        init(request: URLRequest?, response: HTTPURLResponse?, metrics: URLSessionTaskMetrics?, error: AFError?) {
            self.request = request
            self.response = response
            self.metrics = metrics
            self.error = error
        }
    }

    /// Cancels the request it was made for, without keeping that request alive.
    public struct CancellationToken: Sendable {
        private weak var request: DataStreamRequest?

        init(_ request: DataStreamRequest) {
            self.request = request
        }

        /// Cancels the request, if it still exists.
        public func cancel() {
            request?.cancel()
        }
    }
}

extension DataStreamRequest.Stream {
    /// The result of a `.stream` event; nil for `.complete`.
    public var result: Result<Success, Failure>? {
        guard case let .stream(result) = event else { return nil }
        return result
    }

    /// The value of a successful `.stream` event.
    public var value: Success? {
        guard case let .success(value) = result else { return nil }
        return value
    }

    /// The error of a failed `.stream` event.
    public var error: Failure? {
        guard case let .failure(error) = result else { return nil }
        return error
    }

    /// The completion of a `.complete` event; nil for `.stream`.
    public var completion: DataStreamRequest.Completion? {
        guard case let .complete(completion) = event else { return nil }
        return completion
    }
}

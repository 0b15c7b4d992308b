import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension WebSocketRequest {
    /// What a stream handler of a WebSocket request receives.
    public struct Event<Success: Sendable, Failure: Error>: Sendable {
        /// The kinds of event, in the order a connection produces them.
        public enum Kind: Sendable {
            /// The server accepted the connection, with the subprotocol it chose, if any.
            case connected(protocol: String?)
            /// A message arrived (serialized, for a serializer's handler).
            case receivedMessage(Success)
            /// The serializer failed on a message; the connection stays open.
            case serializerFailed(Failure)
            /// A close frame was exchanged: the server closed, `close(sending:reason:)` was
            /// answered, or Lupine failed the connection with this code (`.messageTooBig`,
            /// `.protocolError`). Not sent after `cancel()` or when the connection just drops.
            case disconnected(closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?)
            /// The request finished; always the last event.
            case completed(Completion)
        }

        /// The request, without keeping it alive.
        private weak var socket: WebSocketRequest?
        /// What happened.
        public let kind: Kind

        /// The message of a `.receivedMessage` event.
        public var message: Success? {
            guard case let .receivedMessage(message) = kind else { return nil }
            return message
        }

        init(socket: WebSocketRequest, kind: Kind) {
            self.socket = socket
            self.kind = kind
        }

        /// Closes the connection with a close handshake, as `WebSocketRequest.close(sending:reason:)`:
        /// the request then completes without an error.
        public func close(sending closeCode: URLSessionWebSocketTask.CloseCode, reason: Data? = nil) {
            socket?.close(sending: closeCode, reason: reason)
        }

        /// Cancels the request, as `WebSocketRequest.cancel()`: it completes with
        /// `AFError.explicitlyCancelled`.
        public func cancel() {
            socket?.cancel()
        }

        /// Sends a ping, as `WebSocketRequest.sendPing(respondingOn:onResponse:)`.
        @preconcurrency
        public func sendPing(respondingOn queue: DispatchQueue = .lupineDefault, onResponse: @escaping @Sendable (PingResponse) -> Void) {
            guard let socket else {
                queue.async { onResponse(.unsent) }
                return
            }
            socket.sendPing(respondingOn: queue, onResponse: onResponse)
        }
    }

    /// The request as it was when it finished.
    public struct Completion: Sendable {
        /// The last URLRequest created for the request.
        public let request: URLRequest?
        /// The last response: the 101 of the handshake, or the response that refused it.
        public let response: HTTPURLResponse?
        /// Always nil: URLSession metrics do not exist on this transport; see `Request.timeline`.
        public let metrics: URLSessionTaskMetrics?
        /// The request's error; nil after a close handshake the server started.
        public let error: AFError?

        init(request: URLRequest?, response: HTTPURLResponse?, metrics: URLSessionTaskMetrics?, error: AFError?) {
            self.request = request
            self.response = response
            self.metrics = metrics
            self.error = error
        }
    }

    /// The answer to a ping.
    public enum PingResponse: Sendable {
        /// The server's pong, with when the ping went out and came back.
        public struct Pong: Sendable {
            let start: Date
            let end: Date
            let latency: TimeInterval
        }

        /// The pong arrived.
        case pong(Pong)
        /// The connection ended before the pong arrived.
        case error(any Error)
        /// The connection is not open: nothing was sent.
        case unsent
    }
}

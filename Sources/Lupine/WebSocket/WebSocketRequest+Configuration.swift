import Foundation

extension WebSocketRequest {
    /// How a WebSocket connection is opened and kept.
    public struct Configuration: Sendable {
        /// No subprotocol, messages up to 1 MiB, no automatic pings.
        public static var `default`: Self { Self() }

        /// The default configuration asking for the subprotocol `protocol`.
        public static func `protocol`(_ protocol: String) -> Self {
            Self(protocol: `protocol`)
        }

        /// The default configuration with another message size limit.
        public static func maximumMessageSize(_ maximumMessageSize: Int) -> Self {
            Self(maximumMessageSize: maximumMessageSize)
        }

        /// The default configuration with automatic pings every `pingInterval` seconds.
        public static func pingInterval(_ pingInterval: TimeInterval) -> Self {
            Self(pingInterval: pingInterval)
        }

        /// The subprotocol sent in `Sec-WebSocket-Protocol`, if any.
        public let `protocol`: String?
        /// Largest message accepted, in bytes. A larger one (whole or in fragments) closes the
        /// connection with `.messageTooBig` and fails the request with
        /// `AFError.sessionTaskFailed(error: URLError(.dataLengthExceedsMaximum))`.
        public let maximumMessageSize: Int
        /// Interval of the automatic pings; nil sends none. A ping unanswered for an interval (at
        /// least one second) during which nothing else arrived either means the server is gone:
        /// the connection is closed and the request fails with
        /// `AFError.sessionTaskFailed(error: URLError(.networkConnectionLost))`.
        public let pingInterval: TimeInterval?

        init(protocol: String? = nil, maximumMessageSize: Int = 1_048_576, pingInterval: TimeInterval? = nil) {
            self.protocol = `protocol`
            self.maximumMessageSize = maximumMessageSize
            self.pingInterval = pingInterval
        }
    }
}

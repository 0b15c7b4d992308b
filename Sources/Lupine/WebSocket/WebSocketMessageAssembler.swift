import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reassembles WebSocket messages from data frames (RFC 6455 section 5.4): a text or binary
/// frame starts a message, continuation frames extend it, the frame with FIN ends it.
///
/// A pure state machine: it takes frames and answers with a message, nothing yet, or the close
/// code the connection must fail with. It enforces the message size limit on every fragment, so
/// an oversized message is refused before it is held in memory whole.
struct WebSocketMessageAssembler {
    /// The kinds of data frame.
    enum FrameKind: Equatable {
        case text, binary, continuation
    }

    /// What a frame leads to.
    enum Outcome {
        /// A message is complete.
        case message(URLSessionWebSocketTask.Message)
        /// The message continues in later frames.
        case incomplete
        /// The peer broke the protocol or the limit; the connection closes with this code.
        case failure(URLSessionWebSocketTask.CloseCode)
    }

    /// Largest message accepted, in bytes.
    let maximumMessageSize: Int
    private var pendingKind: FrameKind?
    private var buffer = Data()

    init(maximumMessageSize: Int) {
        self.maximumMessageSize = max(0, maximumMessageSize)
    }

    /// Takes one data frame.
    mutating func receive(_ kind: FrameKind, isFinal: Bool, payload: Data) -> Outcome {
        switch (kind, pendingKind) {
        case (.continuation, nil), (.text, .some), (.binary, .some):
            // A continuation with nothing to continue, or a new message inside an unfinished one.
            return .failure(.protocolError)
        case (.continuation, .some), (.text, nil), (.binary, nil):
            break
        }
        guard buffer.count + payload.count <= maximumMessageSize else {
            reset()
            return .failure(.messageTooBig)
        }
        if kind != .continuation { pendingKind = kind }
        buffer.append(payload)
        guard isFinal, let messageKind = pendingKind else { return .incomplete }
        let message = buffer
        reset()
        switch messageKind {
        case .binary, .continuation:
            return .message(.data(message))
        case .text:
            guard let text = String(validating: message, as: UTF8.self) else { return .failure(.invalidFramePayloadData) }
            return .message(.string(text))
        }
    }

    private mutating func reset() {
        pendingKind = nil
        buffer = Data()
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer

extension LupineTestServer {
    /// "ws://127.0.0.1:<port>" + path.
    func webSocketURL(_ path: String) -> String {
        "ws://127.0.0.1:\(port)" + path
    }
}

extension URLSessionWebSocketTask.Message {
    /// "text:<string>" or "binary:<byte count>", for comparisons (Message is not Equatable on Linux).
    var summary: String {
        switch self {
        case let .string(text): "text:\(text)"
        case let .data(data): "binary:\(data.count)"
        @unknown default: "unknown"
        }
    }
}

extension WebSocketRequest.Event {
    /// A one-line description of the event, for comparing whole sequences.
    var summary: String {
        switch kind {
        case let .connected(`protocol`): "connected(\(`protocol` ?? "nil"))"
        case let .receivedMessage(message):
            (message as? URLSessionWebSocketTask.Message)?.summary ?? "message(\(message))"
        case let .serializerFailed(error): "serializerFailed(\(type(of: error)))"
        case let .disconnected(closeCode, reason):
            "disconnected(\(closeCode.rawValue),\(reason.map { String(decoding: $0, as: UTF8.self) } ?? "nil"))"
        case let .completed(completion): "completed(\(completion.error.map { "\($0)" } ?? "nil"))"
        }
    }

    /// The completion of a `.completed` event.
    var completion: WebSocketRequest.Completion? {
        guard case let .completed(completion) = kind else { return nil }
        return completion
    }
}

/// Iterates every event of `request` until `.completed`, calling `react` for each one first;
/// returns them all.
func webSocketEvents(of request: WebSocketRequest,
                     react: @Sendable (WebSocketRequest.Event<URLSessionWebSocketTask.Message, Never>) async -> Void = { _ in })
    async -> [WebSocketRequest.Event<URLSessionWebSocketTask.Message, Never>] {
    var events: [WebSocketRequest.Event<URLSessionWebSocketTask.Message, Never>] = []
    for await event in request.webSocketTask().streamingMessageEvents() {
        events.append(event)
        await react(event)
    }
    return events
}

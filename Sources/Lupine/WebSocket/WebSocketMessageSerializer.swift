import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns a WebSocket message into a value for `WebSocketRequest.streamSerializer(_:on:handler:)`.
///
/// A failure is delivered as a `.serializerFailed` event; the connection stays open.
public protocol WebSocketMessageSerializer<Output, Failure>: Sendable {
    /// The value made from a message.
    associatedtype Output: Sendable
    /// The error thrown for a message that cannot be serialized.
    associatedtype Failure: Error = any Error

    /// Serializes one message.
    func decode(_ message: URLSessionWebSocketTask.Message) throws -> Output
}

extension WebSocketMessageSerializer {
    /// A serializer decoding each message (text as UTF-8, or binary) as JSON of type `Value`.
    public static func json<Value>(decoding _: Value.Type = Value.self,
                                   using decoder: JSONDecoder = JSONDecoder()) -> DecodableWebSocketMessageDecoder<Value>
        where Self == DecodableWebSocketMessageDecoder<Value> {
        Self(decoder: decoder)
    }
}

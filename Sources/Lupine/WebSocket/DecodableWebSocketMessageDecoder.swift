import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Decodes each WebSocket message as a `Value`: a text message from its UTF-8 bytes, a binary
/// message from its data.
public struct DecodableWebSocketMessageDecoder<Value: Decodable & Sendable>: WebSocketMessageSerializer {
    /// Why a message could not be decoded.
    public enum Error: Swift.Error {
        /// The decoder threw this error.
        case decoding(any Swift.Error)
        /// The message is of a kind this decoder does not know.
        case unknownMessage(description: String)
    }

    /// The decoder used.
    public let decoder: any DataDecoder

    /// Creates a decoder using `decoder`.
    public init(decoder: any DataDecoder) {
        self.decoder = decoder
    }

    /// Decodes `message` as `Value`.
    ///
    /// - Throws: `Error.decoding` with the decoder's error, `Error.unknownMessage` for a message
    ///   that is neither text nor data.
    public func decode(_ message: URLSessionWebSocketTask.Message) throws -> Value {
        let data: Data
        switch message {
        case let .data(messageData): data = messageData
        case let .string(text): data = Data(text.utf8)
        @unknown default: throw Error.unknownMessage(description: String(describing: message))
        }
        do {
            return try decoder.decode(Value.self, from: data)
        } catch {
            throw Error.decoding(error)
        }
    }
}

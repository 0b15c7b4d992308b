import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an open WebSocket connection reports beyond the HTTP exchange of its handshake. Calls
/// come from the connection's event loop, one at a time, in the order things happened.
protocol WebSocketConnectionDelegate: AnyObject, Sendable {
    /// The server switched protocols; `protocol` is the subprotocol it chose, if any.
    func connectionDidOpen(_ connection: WebSocketConnection, protocol: String?)
    /// A whole message arrived.
    func connection(_ connection: WebSocketConnection, didReceive message: URLSessionWebSocketTask.Message)
    /// A close frame was exchanged (either side first), or the client failed the connection with
    /// this code.
    func connection(_ connection: WebSocketConnection, didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?)
}

import Crypto
import Foundation
import NIOHTTP1

/// The opening handshake of one WebSocket connection (RFC 6455 section 4): the header fields the
/// upgrade request carries, and the check of the server's 101.
struct WebSocketHandshake: Sendable {
    /// The `Sec-WebSocket-Key` sent: 16 random bytes in base64.
    let key: String

    init() {
        var generator = SystemRandomNumberGenerator()
        key = Data((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }).base64EncodedString()
    }

    /// Header fields the handshake sets itself; the request's own of these names are dropped.
    static let reservedFields = [
        "upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions",
        "content-length", "transfer-encoding",
    ]

    /// Replaces the request's fields that belong to the handshake by the handshake's own.
    func prepare(_ headers: inout NIOHTTP1.HTTPHeaders) {
        for name in Self.reservedFields { headers.remove(name: name) }
        headers.add(name: "Upgrade", value: "websocket")
        headers.add(name: "Connection", value: "Upgrade")
        headers.add(name: "Sec-WebSocket-Key", value: key)
        headers.add(name: "Sec-WebSocket-Version", value: "13")
    }

    /// The `Sec-WebSocket-Accept` a server that understood `key` answers with.
    var expectedAccept: String {
        let digest = Insecure.SHA1.hash(data: Data((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))
        return Data(digest).base64EncodedString()
    }

    /// Nil when the 101 `head` proves the upgrade (`Upgrade: websocket` and the matching
    /// `Sec-WebSocket-Accept`), else why it does not.
    func rejection(of head: HTTPResponseHead, authority: String) -> String? {
        let upgrade = head.headers[canonicalForm: "upgrade"]
        guard upgrade.contains(where: { $0.lupineEqualsIgnoringASCIICase("websocket") }),
              head.headers.first(name: "Sec-WebSocket-Accept") == expectedAccept else {
            return "The server's WebSocket handshake response is not valid: \(authority) answered 101 without "
                + "Upgrade: websocket and the Sec-WebSocket-Accept matching the request's key."
        }
        return nil
    }
}

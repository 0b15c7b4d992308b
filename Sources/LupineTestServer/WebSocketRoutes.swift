import NIOCore
import NIOHTTP1

/// `/websocket/echo`: the WebSocket endpoint (see `WebSocketBehaviour`). The upgrade itself is
/// decided in `shouldUpgrade`; a request that reaches the router was not upgraded.
enum WebSocketRoutes {
    /// The headers of the 101 response for `head`, or nil to refuse the upgrade (the request then
    /// goes on to the router as a plain HTTP request).
    static func upgradeHeaders(for head: HTTPRequestHead) -> HTTPHeaders? {
        let request = TestRequest(head: head, body: ByteBuffer(), localPort: 0)
        guard request.segments == ["websocket", "echo"], WebSocketBehaviour(request).allowsUpgrade(request) else {
            return nil
        }
        var headers = HTTPHeaders()
        // The first subprotocol the client offers is accepted.
        if let offered = request.header("sec-websocket-protocol")?.split(separator: ",").first {
            headers.add(name: "Sec-WebSocket-Protocol", value: offered.trimmingCharacters(in: " "))
        }
        return headers
    }

    /// The answer to a `/websocket/...` request that was not upgraded.
    static func refused(_ request: TestRequest) -> ResponsePlan {
        let behaviour = WebSocketBehaviour(request)
        if !behaviour.allowsUpgrade(request) {
            return .response(.empty(.unauthorized, headers: ["WWW-Authenticate": "Bearer"]))
        }
        return .response(.error(.upgradeRequired, "this endpoint speaks WebSocket only"))
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        String(drop { $0 == set }.reversed().drop { $0 == set }.reversed())
    }
}

import NIOCore
import NIOHTTP1

/// Sits between the HTTP decoder and `NIOHTTPClientUpgradeHandler` and notes a 101 response
/// head, which the upgrade handler swallows.
///
/// A server may send 101, its first frames and a FIN in one go: the connection then becomes
/// inactive before the upgrade has run (the decoder's removal is deferred), and the handshake
/// handler must not end the exchange as if no answer had come. (Frames that arrive in the same
/// read as the 101 and the FIN may still be dropped by the HTTP decoder at end of stream: the
/// request then reports `.connected` and fails with `URLError(.networkConnectionLost)`.)
final class WebSocketSwitchObserver: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart

    private let connection: WebSocketConnection

    init(connection: WebSocketConnection) {
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case let .head(head) = unwrapInboundIn(data), head.status == .switchingProtocols {
            connection.isSwitchingProtocols = true
        }
        context.fireChannelRead(data)
    }
}

import NIOCore
import NIOHTTP2

/// Reads the connection-level frames an `HTTP2Connection` acts on: the peer's limit on concurrent
/// streams (SETTINGS), GOAWAY and PING acknowledgements; and the connection errors
/// swift-nio-http2 reports.
///
/// swift-nio-http2 passes a GOAWAY frame on before it closes the streams the frame refused, so
/// the connection knows the last stream id when those streams fail.
final class HTTP2FrameWatcher: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame

    private let connection: HTTP2Connection

    init(connection: HTTP2Connection) {
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case let .settings(.settings(settings)):
            if let limit = settings.last(where: { $0.parameter == .maxConcurrentStreams })?.value {
                connection.streamLimitChanged(to: limit)
            }
        case let .goAway(lastStreamID, _, _):
            connection.goAwayReceived(lastStreamID: lastStreamID)
        case let .ping(data, ack: true):
            connection.pingAcknowledged(data)
        default:
            break
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        connection.connectionErrorCaught(error)
    }
}

import NIOCore
import NIOHTTP2

/// Counts the connection-level frames a test asks about: PINGs from the client.
final class HTTP2FrameCounter: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame

    private let counters: LupineHTTP2TestServer.Counters

    init(counters: LupineHTTP2TestServer.Counters) {
        self.counters = counters
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .ping(_, ack: false) = unwrapInboundIn(data).payload {
            counters.pingsReceived.withLock { $0 += 1 }
        }
        context.fireChannelRead(data)
    }
}

import NIOCore

/// Sits in front of an HTTP/1.1 connection's response decoder and tells the exchange handler
/// whenever bytes arrive, before they make up a whole part: a response head that trickles in byte
/// by byte is a server at work, not a quiet one, and must not trip the idle timeout (URLSession's
/// request timeout restarts whenever data arrives, head included).
final class ReadActivityObserver: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let handler: ExchangeHandler

    init(handler: ExchangeHandler) {
        self.handler = handler
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        handler.bytesArrived()
        context.fireChannelRead(data)
    }
}

import NIOCore

/// Sits next to the socket, ahead of the HTTP handlers, so fault endpoints can write bytes
/// that the HTTP encoder would refuse to produce. Ordinary encoded output passes straight through.
final class RawWriteGate: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Writes `bytes` to the socket unframed; nil once the gate has left the pipeline.
    func writeAndFlush(_ bytes: ByteBuffer) -> EventLoopFuture<Void>? {
        guard let context else { return nil }
        return context.writeAndFlush(wrapOutboundOut(bytes))
    }
}

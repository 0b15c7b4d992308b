import NIOCore

/// Holds what reaches it while a connection switches protocols: the bytes that followed the 101
/// (the HTTP decoder hands them over on its way out, which NIO defers to a later tick), and the
/// end of the connection if it came meanwhile. Once the new protocol's handlers are in place
/// after it, `release` passes all of it on and removes the buffer.
///
/// The new handlers must not be added before the decoder is gone: it watches outbound writes as
/// HTTP request parts, and a frame written in answer to one that came with the 101 would reach it.
final class ProtocolSwitchBuffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private var held: [NIOAny] = []
    private var sawInactive = false
    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        held.append(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {}

    func channelInactive(context: ChannelHandlerContext) {
        sawInactive = true
    }

    /// Passes on what was held, then leaves the pipeline.
    func release() {
        guard let context else { return }
        let held = held
        self.held = []
        for data in held { context.fireChannelRead(data) }
        if !held.isEmpty { context.fireChannelReadComplete() }
        if sawInactive { context.fireChannelInactive() }
        context.pipeline.syncOperations.removeHandler(self, promise: nil)
    }
}

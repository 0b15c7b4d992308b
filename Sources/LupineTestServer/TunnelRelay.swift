import NIOCore

/// Copies every byte read on its channel to `partner`, and closes `partner` when its channel
/// closes: the proxy-to-origin half of a tunnel.
final class TunnelRelay: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let partner: any Channel

    init(partner: any Channel) {
        self.partner = partner
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        partner.writeAndFlush(unwrapInboundIn(data), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

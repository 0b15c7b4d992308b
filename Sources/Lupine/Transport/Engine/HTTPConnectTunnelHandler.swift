import NIOCore

/// Opens a tunnel through an HTTP proxy (RFC 9110 section 9.3.6): sends `CONNECT host:port`,
/// reads the proxy's answer, and on a 2xx removes itself so that the bytes that follow (the TLS
/// handshake with the origin, or a WebSocket upgrade) go through the tunnel.
///
/// A 407 fails with `EngineError.proxyAuthenticationRequired`, any other status with
/// `EngineError.proxyRefusedTunnel`.
final class HTTPConnectTunnelHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Fired down the pipeline once the tunnel is open.
    struct Established: Sendable {}

    private let target: String
    private let authorization: String?
    private var received: ByteBuffer?
    /// The longest answer head accepted from the proxy.
    private static let maximumHeadBytes = 16 * 1024

    /// - Parameters:
    ///   - target: `host:port` of the origin (IPv6 in brackets).
    ///   - authorization: The `Proxy-Authorization` value to send, if any.
    init(target: String, authorization: String?) {
        self.target = target
        self.authorization = authorization
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { sendConnect(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        sendConnect(context: context)
        context.fireChannelActive()
    }

    private func sendConnect(context: ChannelHandlerContext) {
        var head = "CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n"
        if let authorization { head += "Proxy-Authorization: \(authorization)\r\n" }
        head += "\r\n"
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: head)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        if received == nil {
            received = buffer
        } else {
            received?.writeBuffer(&buffer)
        }
        guard var received, let headEnd = Self.headEnd(in: received) else {
            if (received?.readableBytes ?? 0) > Self.maximumHeadBytes {
                context.fireErrorCaught(EngineError.invalidProxyResponse)
            }
            return
        }
        let head = received.readString(length: headEnd) ?? ""
        received.moveReaderIndex(forwardBy: 4)
        self.received = nil
        guard let status = Self.status(of: head) else {
            context.fireErrorCaught(EngineError.invalidProxyResponse)
            return
        }
        guard (200..<300).contains(status) else {
            context.fireErrorCaught(status == 407 ? EngineError.proxyAuthenticationRequired : EngineError.proxyRefusedTunnel(status: status))
            return
        }
        let leftOver = received
        context.fireUserInboundEventTriggered(Established())
        // Bytes of the origin that came in the same read as the answer (a server that speaks
        // first) go on before this handler leaves: once it has left, its context leads nowhere.
        if leftOver.readableBytes > 0 {
            context.fireChannelRead(wrapInboundOut(leftOver))
            context.fireChannelReadComplete()
        }
        context.pipeline.syncOperations.removeHandler(self, promise: nil)
    }

    /// The status code of the answer's status line, or nil when it is not an HTTP/1 status line.
    static func status(of head: String) -> Int? {
        guard let line = head.split(separator: "\r\n", maxSplits: 1, omittingEmptySubsequences: false).first else { return nil }
        let parts = line.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let code = Int(parts[1]) else { return nil }
        return code
    }

    private static func headEnd(in buffer: ByteBuffer) -> Int? {
        let view = buffer.readableBytesView
        guard view.count >= 4 else { return nil }
        var index = view.startIndex
        while index <= view.endIndex - 4 {
            if view[index] == 13, view[index + 1] == 10, view[index + 2] == 13, view[index + 3] == 10 {
                return index - view.startIndex
            }
            index += 1
        }
        return nil
    }
}

import NIOCore
import NIOPosix

/// The client side of one `LupineTestProxy` connection: reads the handshake, opens the tunnel to
/// the target, then copies bytes both ways (without backpressure: tests send little through it).
final class ProxyTunnelHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private enum State {
        case handshake(greeted: Bool)
        case connecting
        case relaying(any Channel)
        case closed
    }

    private let kind: LupineTestProxy.Kind
    private let requiredAuthorization: String?
    private let connectPorts: Set<Int>?
    private let loopbackDomains: Set<String>
    private let log: ProxyLog
    private var state = State.handshake(greeted: false)
    private var received = ByteBuffer()

    init(kind: LupineTestProxy.Kind, requiredAuthorization: String?, connectPorts: Set<Int>?,
         loopbackDomains: Set<String> = [], log: ProxyLog) {
        self.kind = kind
        self.requiredAuthorization = requiredAuthorization
        self.connectPorts = connectPorts
        self.loopbackDomains = loopbackDomains
        self.log = log
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        switch state {
        case let .relaying(target):
            target.writeAndFlush(bytes, promise: nil)
        case .connecting:
            received.writeBuffer(&bytes)
        case let .handshake(greeted):
            received.writeBuffer(&bytes)
            handshake(context: context, greeted: greeted)
        case .closed:
            break
        }
    }

    private func handshake(context: ChannelHandlerContext, greeted: Bool) {
        let outcome = kind == .http
            ? ProxyHandshake.httpRequest(received, requiredAuthorization: requiredAuthorization, connectPorts: connectPorts,
                                         loopbackDomains: loopbackDomains)
            : ProxyHandshake.socks(received, greeted: greeted, loopbackDomains: loopbackDomains)
        switch outcome {
        case .incomplete:
            return
        case let .socksGreeting(reply, consumed):
            received.moveReaderIndex(forwardBy: consumed)
            received.discardReadBytes()
            state = .handshake(greeted: true)
            context.writeAndFlush(NIOAny(reply), promise: nil)
            if received.readableBytes > 0 { handshake(context: context, greeted: true) }
        case let .refuse(record, reply):
            if let record { log.append(record) }
            state = .closed
            context.writeAndFlush(NIOAny(reply)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        case let .tunnel(host, port, record, reply):
            log.append(record)
            state = .connecting
            // The handshake's bytes are consumed; anything after them belongs to the tunnel.
            if kind == .http, let end = received.readableBytesView.firstRange(of: [13, 10, 13, 10]) {
                received.moveReaderIndex(to: end.upperBound)
            } else {
                received.clear()
            }
            open(host: host, port: port, reply: reply, context: context)
        case let .forward(host, port, record, head, consumed):
            log.append(record)
            state = .connecting
            // The origin gets the rewritten head first, then whatever followed the original one.
            received.moveReaderIndex(forwardBy: consumed)
            var outgoing = head
            outgoing.writeBuffer(&received)
            received = outgoing
            open(host: host, port: port, reply: nil, context: context)
        }
    }

    private func open(host: String, port: Int, reply: ByteBuffer?, context: ChannelHandlerContext) {
        let client = context.channel
        ClientBootstrap(group: context.eventLoop)
            .channelInitializer { target in
                target.eventLoop.makeCompletedFuture {
                    try target.pipeline.syncOperations.addHandler(TunnelRelay(partner: client))
                }
            }
            .connect(host: host, port: port)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case let .success(target):
                    self.state = .relaying(target)
                    if let reply { context.writeAndFlush(NIOAny(reply), promise: nil) }
                    if self.received.readableBytes > 0 {
                        target.writeAndFlush(self.received, promise: nil)
                        self.received.clear()
                    }
                case .failure:
                    self.state = .closed
                    let failure = self.kind == .http
                        ? ByteBuffer(string: "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                        : ByteBuffer(bytes: [5, 5, 0, 1, 0, 0, 0, 0, 0, 0])
                    context.writeAndFlush(NIOAny(failure)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
                }
            }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case let .relaying(target) = state { target.close(promise: nil) }
        state = .closed
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

import NIOCore
import NIOSOCKS
import NIOSSL
import NIOTLS

/// Watches a new connection until it can carry HTTP: the TCP connect, then the proxy step (a
/// SOCKS5 connect or an HTTP `CONNECT` tunnel) and the TLS handshake, whichever apply. It reports
/// the protocol ALPN chose, or the first failure, and bounds each phase by a deadline: the TCP
/// connect by one, the proxy and TLS handshakes together by another.
///
/// The TLS handler is added only once the proxy step is done, so that the handshake travels
/// through the tunnel.
final class ConnectionSetupHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// What the connection speaks once set up.
    enum Negotiated: Sendable {
        case http1
        case http2
    }

    private let promise: EventLoopPromise<Negotiated>
    private let clock: any EngineClock
    private let timeout: TimeAmount
    /// Makes the TLS handler, for TLS connections.
    private let makeTLSHandler: (() throws -> NIOSSLClientHandler)?
    /// Whether a proxy step comes before TLS (or before HTTP).
    private let awaitsProxy: Bool
    private var timer: Scheduled<Void>?
    private var isComplete = false
    /// The TLS handler is in place: the handshake is under way.
    private var tlsHandshakeStarted = false
    /// Bytes that arrived once the connection was ready, before the HTTP handlers were added behind
    /// this one (a server may speak first): handed on when this handler leaves.
    private var heldReads: [NIOAny] = []
    private var context: ChannelHandlerContext?

    init(promise: EventLoopPromise<Negotiated>, clock: any EngineClock, timeout: TimeAmount,
         awaitsProxy: Bool, makeTLSHandler: (() throws -> NIOSSLClientHandler)?) {
        self.promise = promise
        self.clock = clock
        self.timeout = timeout
        self.awaitsProxy = awaitsProxy
        self.makeTLSHandler = makeTLSHandler
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // The TCP connect.
        armTimer(context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Gives the connection up before it is set up (the engine shuts down): the setup fails with
    /// `EngineError.shutDown` and the channel closes, a TCP connect under way included.
    func abort() {
        guard !isComplete else { return }
        guard let context else {
            isComplete = true
            timer?.cancel()
            promise.fail(EngineError.shutDown)
            return
        }
        fail(EngineError.shutDown, context: context)
    }

    func channelActive(context: ChannelHandlerContext) {
        timer?.cancel()
        if awaitsProxy {
            armTimer(context: context)
        } else if makeTLSHandler != nil {
            armTimer(context: context)
            addTLSHandler(context: context)
        } else {
            succeed(.http1)
        }
        context.fireChannelActive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case is SOCKSProxyEstablishedEvent, is HTTPConnectTunnelHandler.Established:
            if makeTLSHandler != nil {
                addTLSHandler(context: context)
            } else {
                succeed(.http1)
            }
        case let TLSUserEvent.handshakeCompleted(negotiatedProtocol):
            succeed(negotiatedProtocol == "h2" ? .http2 : .http1)
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    private func addTLSHandler(context: ChannelHandlerContext) {
        do {
            guard let makeTLSHandler else { return }
            // Set first: adding the handler starts the handshake, which may fail at once.
            tlsHandshakeStarted = true
            try context.pipeline.syncOperations.addHandler(makeTLSHandler(), position: .before(self))
        } catch {
            fail(error, context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error, context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard isComplete else {
            context.fireChannelRead(data)
            return
        }
        heldReads.append(data)
    }

    func removeHandler(context: ChannelHandlerContext, removalToken: ChannelHandlerContext.RemovalToken) {
        let held = heldReads
        heldReads.removeAll()
        for data in held { context.fireChannelRead(data) }
        if !held.isEmpty { context.fireChannelReadComplete() }
        context.leavePipeline(removalToken: removalToken)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(EngineError.closedDuringSetup, context: context)
        context.fireChannelInactive()
    }

    /// The connect attempt itself failed (refused, unreachable, unknown host).
    func connectFailed(_ error: any Error) {
        guard !isComplete else { return }
        isComplete = true
        timer?.cancel()
        // A direct TLS connection starts its handshake as soon as it is made: a connection that
        // ends as it becomes active (the connect itself reports the reset) ends that handshake.
        let handshakeBegins = makeTLSHandler != nil && !awaitsProxy
        promise.fail(handshakeBegins && Self.endsTheConnection(error) ? EngineError.tlsHandshakeBrokenOff : reported(error))
    }

    private func succeed(_ negotiated: Negotiated) {
        guard !isComplete else { return }
        isComplete = true
        timer?.cancel()
        promise.succeed(negotiated)
    }

    private func fail(_ error: any Error, context: ChannelHandlerContext) {
        guard !isComplete else { return }
        isComplete = true
        timer?.cancel()
        promise.fail(reported(error))
        context.close(promise: nil)
    }

    /// A server that closes or resets the connection during the TLS handshake breaks the handshake
    /// off, whichever of the TLS layer's error, the reset or the close arrives first.
    private func reported(_ error: any Error) -> any Error {
        tlsHandshakeStarted && Self.endsTheConnection(error) ? EngineError.tlsHandshakeBrokenOff : error
    }

    /// Whether `error` is the connection ending (a close or a reset, as the TLS layer or the socket saw it).
    private static func endsTheConnection(_ error: any Error) -> Bool {
        EngineErrors.code(for: error) == .networkConnectionLost
    }

    private func armTimer(context: ChannelHandlerContext) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = clock.schedule(on: context.eventLoop, at: clock.now + timeout) {
            let (handler, context) = bound.value
            handler.fail(EngineError.timedOut, context: context)
        }
    }
}

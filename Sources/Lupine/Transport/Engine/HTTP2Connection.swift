import NIOCore
import NIOHTTP1
import NIOHTTP2

/// An HTTP/2 connection (ALPN chose h2): each exchange runs on a stream of its own, through the
/// same `ExchangeHandler` as on HTTP/1.1, behind swift-nio-http2's HTTP/1 codec. The pool counts
/// its free streams; the peer's SETTINGS set how many may run at once, and GOAWAY stops new ones.
final class HTTP2Connection: PooledConnection, ExchangeHandlerOwner, @unchecked Sendable {
    let id: Int
    let key: ConnectionKey
    let channel: any Channel
    let isDedicated = false
    private let multiplexer: NIOHTTP2Handler.StreamMultiplexer
    private let pool: ConnectionPool
    private let clock: any EngineClock
    private let decompressionRatioLimit: Int
    /// Keeps the evaluator, whose identity is part of `key`, alive as long as the connection.
    private let trustCheck: ServerTrustCheck?
    /// Handlers of the running streams (event loop only), for shutdown.
    private var running: [ObjectIdentifier: ExchangeHandler] = [:]

    private init(id: Int, key: ConnectionKey, channel: any Channel, multiplexer: NIOHTTP2Handler.StreamMultiplexer,
                 pool: ConnectionPool, clock: any EngineClock, decompressionRatioLimit: Int, trustCheck: ServerTrustCheck?) {
        self.id = id
        self.key = key
        self.channel = channel
        self.multiplexer = multiplexer
        self.pool = pool
        self.clock = clock
        self.decompressionRatioLimit = decompressionRatioLimit
        self.trustCheck = trustCheck
    }

    /// Adds the HTTP/2 handlers to `channel` (on its event loop) and returns the connection.
    static func make(id: Int, key: ConnectionKey, channel: any Channel, pool: ConnectionPool, clock: any EngineClock,
                     decompressionRatioLimit: Int, trustCheck: ServerTrustCheck?) throws -> HTTP2Connection {
        let pipeline = channel.pipeline.syncOperations
        let multiplexer = try pipeline.configureHTTP2Pipeline(mode: .client,
                                                              connectionConfiguration: .init(),
                                                              streamConfiguration: .init()) { pushed in
            // Lupine asks for no server push; a stream the server opens anyway is refused.
            pushed.close()
        }
        let connection = HTTP2Connection(id: id, key: key, channel: channel, multiplexer: multiplexer, pool: pool, clock: clock,
                                         decompressionRatioLimit: decompressionRatioLimit, trustCheck: trustCheck)
        try pipeline.addHandler(HTTP2SettingsWatcher(connection: connection, pool: pool))
        return connection
    }

    func run(_ exchange: EngineExchange) {
        let (clock, ratio, httpProtocol) = (clock, decompressionRatioLimit,
                                            key.usesTLS ? HTTP2FramePayloadToHTTP1ClientCodec.HTTPProtocol.https : .http)
        multiplexer.createStreamChannel { stream in
            stream.eventLoop.makeCompletedFuture {
                let pipeline = stream.pipeline.syncOperations
                try pipeline.addHandler(HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: httpProtocol))
                try pipeline.addHandler(ExchangeHandler(clock: clock, decompressionRatioLimit: ratio))
            }
        }.whenComplete { result in
            switch result {
            case let .success(stream):
                self.start(exchange, on: stream)
            case .failure:
                self.pool.streamDidEnd(on: self)
                if exchange.bodyIsReplayable, exchange.prepareRetry() {
                    exchange.pool.retry(exchange)
                } else {
                    exchange.finish(error: exchange.failure(.networkConnectionLost))
                }
            }
        }
    }

    private func start(_ exchange: EngineExchange, on stream: any Channel) {
        guard let handler = try? stream.pipeline.syncOperations.handler(type: ExchangeHandler.self) else {
            stream.close(promise: nil)
            exchange.finish(error: exchange.failure(.networkConnectionLost))
            return
        }
        handler.owner = self
        let identifier = ObjectIdentifier(handler)
        running[identifier] = handler
        stream.closeFuture.whenComplete { _ in
            self.running[identifier] = nil
            self.pool.streamDidEnd(on: self)
        }
        handler.start(exchange, reused: false)
    }

    func exchangeHandlerDidFinish(_ handler: ExchangeHandler, reusable: Bool) {
        // A stream that ended in both directions is closed by swift-nio-http2 itself, once its
        // END_STREAM has gone through the connection's state machine. Closing its channel from
        // here, a moment earlier, sends RST_STREAM(CANCEL) for every request; servers count resets
        // (swift-nio-http2's allows 200 in 30 s, as a "rapid reset" defence) and then drop the
        // connection under the requests still running on it. Only a stream that did not end
        // cleanly (the request not all sent, parts left) is reset.
        if !reusable { handler.closeChannel() }
    }

    func exchangeHandler(_ handler: ExchangeHandler, switchesTo upgrade: any ProtocolUpgrade, switched: @escaping (Bool) -> Void) {
        // Upgrades run on HTTP/1.1 connections only (ALPN offers no h2 for them).
        handler.closeChannel()
        switched(false)
    }

    func exchangeHandlerKeepsUnsolicitedInput(_ handler: ExchangeHandler) -> Bool {
        // A stream's handler is in place before its exchange starts; nothing is promised to it.
        false
    }

    func cancelRunningExchanges() {
        for handler in running.values {
            if let exchange = handler.exchange { handler.cancel(exchange) }
        }
    }

    /// The peer broke the protocol of the connection (a connection error: swift-nio-http2 sent
    /// GOAWAY but leaves the connection open): every running stream fails with that error at once,
    /// instead of waiting for its timeout, and the connection closes.
    func connectionErrorCaught(_ error: any Error) {
        for handler in running.values {
            guard let exchange = handler.exchange else { continue }
            handler.fail(exchange, with: EngineErrors.urlError(for: error, url: exchange.request.url, authority: key.authority))
        }
        channel.close(promise: nil)
    }
}

/// Reads the connection-level frames an HTTP/2 connection's pool cares about: the peer's limit
/// on concurrent streams, and GOAWAY.
final class HTTP2SettingsWatcher: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame

    private let connection: HTTP2Connection
    private let pool: ConnectionPool

    init(connection: HTTP2Connection, pool: ConnectionPool) {
        self.connection = connection
        self.pool = pool
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case let .settings(.settings(settings)):
            if let limit = settings.last(where: { $0.parameter == .maxConcurrentStreams })?.value {
                pool.updateStreamLimit(of: connection, to: limit)
            }
        case .goAway:
            pool.connectionIsGoingAway(connection)
        default:
            break
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        connection.connectionErrorCaught(error)
    }
}

import NIOCore
import NIOHTTP1
import NIOHTTP2

/// An HTTP/2 connection (ALPN chose h2): each exchange runs on a stream of its own, through the
/// same `ExchangeHandler` as on HTTP/1.1, behind swift-nio-http2's HTTP/1 codec.
///
/// Its life cycle, with the pool (`PoolEntry.MultiplexedSlot`) counting its streams:
/// - the peer's SETTINGS set how many streams may run at once;
/// - on GOAWAY it takes no new streams (a replacement may open at once), the streams at or below
///   the last stream id finish, those above it were never processed and are sent again on another
///   connection whatever their method (RFC 9113 section 6.8), and it closes once drained;
/// - a stream reset with REFUSED_STREAM was not processed either, and is sent again;
/// - unused for `idleConnectionTimeout`, it closes;
/// - with a PING interval configured, it sends PING frames and closes when one goes unanswered
///   for as long, failing its streams.
///
/// State marked "event loop" is touched on the channel's event loop only.
final class HTTP2Connection: MultiplexedConnection, ExchangeHandlerOwner, @unchecked Sendable {
    let id: Int
    let key: ConnectionKey
    let channel: any Channel
    let isDedicated = false
    private let multiplexer: NIOHTTP2Handler.StreamMultiplexer
    private let pool: ConnectionPool
    private let clock: any EngineClock
    private let decompressionRatioLimit: Int
    private let pingInterval: TimeAmount?
    /// Keeps the evaluator, whose identity is part of `key`, alive as long as the connection.
    private let trustCheck: ServerTrustCheck?

    // Event loop.
    /// Handlers of the running streams, for shutdown and connection errors.
    private var running: [ObjectIdentifier: ExchangeHandler] = [:]
    /// The last stream id of the peer's GOAWAY: streams above it were refused unprocessed.
    private var goAwayLastStreamID: HTTP2StreamID?
    private var idleSince: NIODeadline?
    private var idleTimer: Scheduled<Void>?
    private var pingTimer: Scheduled<Void>?
    /// The PING waiting for its acknowledgement: its payload and when it was sent.
    private var pendingPing: (data: UInt64, sentAt: NIODeadline)?
    private var nextPingData: UInt64 = 0

    private init(id: Int, key: ConnectionKey, channel: any Channel, multiplexer: NIOHTTP2Handler.StreamMultiplexer,
                 pool: ConnectionPool, clock: any EngineClock, decompressionRatioLimit: Int, pingInterval: TimeAmount?,
                 trustCheck: ServerTrustCheck?) {
        self.id = id
        self.key = key
        self.channel = channel
        self.multiplexer = multiplexer
        self.pool = pool
        self.clock = clock
        self.decompressionRatioLimit = decompressionRatioLimit
        self.pingInterval = pingInterval
        self.trustCheck = trustCheck
    }

    /// Adds the HTTP/2 handlers to `channel` (on its event loop) and returns the connection.
    static func make(id: Int, key: ConnectionKey, channel: any Channel, pool: ConnectionPool, clock: any EngineClock,
                     decompressionRatioLimit: Int, pingInterval: TimeAmount?, trustCheck: ServerTrustCheck?) throws -> HTTP2Connection {
        let pipeline = channel.pipeline.syncOperations
        // Under the frame handler that `configureHTTP2Pipeline` adds last.
        try pipeline.addHandler(FlushCoalescer())
        let multiplexer = try pipeline.configureHTTP2Pipeline(mode: .client,
                                                              connectionConfiguration: .init(),
                                                              streamConfiguration: .init()) { pushed in
            // Lupine asks for no server push; a stream the server opens anyway is refused.
            pushed.close()
        }
        let connection = HTTP2Connection(id: id, key: key, channel: channel, multiplexer: multiplexer, pool: pool, clock: clock,
                                         decompressionRatioLimit: decompressionRatioLimit, pingInterval: pingInterval,
                                         trustCheck: trustCheck)
        try pipeline.addHandler(HTTP2FrameWatcher(connection: connection))
        channel.closeFuture.whenComplete { _ in connection.channelDidClose() }
        connection.schedulePing()
        return connection
    }

    // MARK: Streams

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
                // No stream: the request never left. The leased stream is given back.
                self.pool.streamEnded(on: self)
                if exchange.bodyIsReplayable, exchange.prepareRetry(unprocessed: true) {
                    exchange.pool.retry(exchange)
                } else {
                    exchange.finish(error: exchange.failure(.networkConnectionLost))
                }
            }
        }
    }

    private func start(_ exchange: EngineExchange, on stream: any Channel) {
        idleSince = nil
        // The leased stream is given back when the stream closes, whatever happens to it.
        guard let handler = try? stream.pipeline.syncOperations.handler(type: ExchangeHandler.self) else {
            stream.closeFuture.whenComplete { _ in self.pool.streamEnded(on: self) }
            stream.close(promise: nil)
            exchange.finish(error: exchange.failure(.networkConnectionLost))
            return
        }
        handler.owner = self
        let identifier = ObjectIdentifier(handler)
        running[identifier] = handler
        stream.closeFuture.whenComplete { _ in
            self.running[identifier] = nil
            self.pool.streamEnded(on: self)
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

    /// A stream the server reset with REFUSED_STREAM, or one above the last stream id of its
    /// GOAWAY, was not processed (RFC 9113 sections 8.7 and 6.8).
    func exchangeHandlerRequestWasUnprocessed(_ handler: ExchangeHandler, error: any Error) -> Bool {
        switch error {
        case let closed as NIOHTTP2Errors.StreamClosed:
            if closed.errorCode == .refusedStream { return true }
            guard let goAwayLastStreamID else { return false }
            return closed.streamID > goAwayLastStreamID
        case is NIOHTTP2Errors.CreatedStreamAfterGoaway:
            return true
        default:
            return false
        }
    }

    func cancelRunningExchanges() {
        for handler in running.values {
            if let exchange = handler.exchange { handler.cancel(exchange) }
        }
    }

    // MARK: Connection events (event loop)

    /// The peer sent GOAWAY: no new streams; the pool may open a replacement.
    func goAwayReceived(lastStreamID: HTTP2StreamID) {
        goAwayLastStreamID = min(goAwayLastStreamID ?? lastStreamID, lastStreamID)
        pool.connectionIsGoingAway(self)
    }

    /// The peer's SETTINGS changed its limit on concurrent streams.
    func streamLimitChanged(to limit: Int) {
        pool.streamLimitChanged(of: self, to: limit)
    }

    /// The peer broke the protocol of the connection (a connection error: swift-nio-http2 sent
    /// GOAWAY but leaves the connection open): every running stream fails with that error at once,
    /// instead of waiting for its timeout, and the connection closes.
    func connectionErrorCaught(_ error: any Error) {
        failRunningStreams(with: error)
        channel.close(promise: nil)
    }

    private func failRunningStreams(with error: any Error) {
        for handler in running.values {
            guard let exchange = handler.exchange else { continue }
            handler.fail(exchange, with: EngineErrors.urlError(for: error, url: exchange.request.url, authority: key.authority))
        }
    }

    private func channelDidClose() {
        idleTimer?.cancel()
        idleTimer = nil
        pingTimer?.cancel()
        pingTimer = nil
    }

    // MARK: Idle timeout

    func becameIdle() {
        if channel.eventLoop.inEventLoop {
            idle()
        } else {
            channel.eventLoop.execute { self.idle() }
        }
    }

    /// No stream is leased: the idle timer closes the connection unless one starts meanwhile. One
    /// timer serves many idle periods: it re-arms itself instead of being cancelled on each use.
    private func idle() {
        guard running.isEmpty, channel.isActive else { return }
        let now = clock.now
        idleSince = now
        guard idleTimer == nil else { return }
        armIdleTimer(at: now + pool.idleConnectionTimeout)
    }

    private func armIdleTimer(at deadline: NIODeadline) {
        idleTimer = clock.schedule(on: channel.eventLoop, at: deadline) { [weak self] in self?.idleTimerFired() }
    }

    private func idleTimerFired() {
        idleTimer = nil
        guard let idleSince, running.isEmpty else { return }
        let due = idleSince + pool.idleConnectionTimeout
        if due > clock.now {
            armIdleTimer(at: due)
        } else if pool.takeIdle(self) {
            pool.logger.debug("closing idle connection", metadata: ["connection": "\(id)", "origin": "\(key.authority)"])
            channel.close(promise: nil)
        }
    }

    // MARK: PING

    /// The shortest time a PING's answer is waited for, whatever the interval: a busy peer (or a
    /// busy machine) may take longer than a short interval to answer.
    static let minimumPingTimeout = TimeAmount.seconds(5)

    private func schedulePing() {
        guard let pingInterval, channel.isActive else { return }
        pingTimer = clock.schedule(on: channel.eventLoop, at: clock.now + pingInterval) { [weak self] in
            self?.pingIsDue()
        }
    }

    /// Sends a PING, unless one is still unanswered: after a whole interval (at least
    /// `minimumPingTimeout`) without an answer, the peer is gone and the connection closes.
    private func pingIsDue() {
        pingTimer = nil
        guard let pingInterval, channel.isActive else { return }
        let now = clock.now
        if let pendingPing {
            if now - pendingPing.sentAt >= max(pingInterval, Self.minimumPingTimeout) {
                pool.logger.debug("PING unanswered, closing", metadata: ["connection": "\(id)", "origin": "\(key.authority)"])
                failRunningStreams(with: EngineError.pingUnanswered)
                channel.close(promise: nil)
                return
            }
        } else {
            nextPingData &+= 1
            pendingPing = (nextPingData, now)
            let frame = HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(withInteger: nextPingData), ack: false))
            channel.writeAndFlush(frame, promise: nil)
        }
        schedulePing()
    }

    /// The peer acknowledged a PING.
    func pingAcknowledged(_ data: HTTP2PingData) {
        if pendingPing?.data == data.integer { pendingPing = nil }
    }
}

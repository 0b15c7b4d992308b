import NIOCore
import NIOHTTP1
import Synchronization

/// An HTTP/1.1 connection: one exchange at a time, kept alive and handed back to its pool
/// between exchanges, closed after `idleConnectionTimeout` unused. After a 101 to an upgrade
/// exchange it leaves the pool and carries the new protocol until it closes.
final class HTTP1Connection: PooledConnection, ExchangeHandlerOwner, @unchecked Sendable {
    /// The HTTP handlers of the connection's pipeline, removed when it switches protocols.
    struct HTTPHandlers {
        var readObserver: ReadActivityObserver
        var encoder: HTTPRequestEncoder
        var decoder: ByteToMessageHandler<HTTPResponseDecoder>
        var headerValidator: NIOHTTPRequestHeadersValidator
    }

    let id: Int
    let key: ConnectionKey
    let channel: any Channel
    /// Runs the exchanges; touched on the event loop only.
    private let handler: ExchangeHandler
    private let httpHandlers: HTTPHandlers
    /// The protocol the connection switched to, if it did (event loop only).
    private var upgrade: (any ProtocolUpgrade)?
    private let pool: ConnectionPool
    /// A connection of its own for one exchange (a value-type trust evaluator): closed after it.
    let isDedicated: Bool
    /// Keeps the evaluator, whose identity is part of `key`, alive as long as the connection.
    private let trustCheck: ServerTrustCheck?

    /// Exchanges handed over from off the event loop, in order, until the loop starts them: the
    /// closure queued on the loop then captures the connection alone, which Swift passes as the
    /// closure's context instead of allocating one (an allocation per request from a task).
    private let handedOver = Mutex(SmallList<EngineExchange>())

    // Event-loop state.
    private var idleSince: NIODeadline?
    private var idleTimer: Scheduled<Void>?

    init(id: Int, key: ConnectionKey, channel: any Channel, handler: ExchangeHandler, httpHandlers: HTTPHandlers,
         pool: ConnectionPool, isDedicated: Bool, trustCheck: ServerTrustCheck?) {
        self.httpHandlers = httpHandlers
        self.trustCheck = trustCheck
        self.id = id
        self.key = key
        self.channel = channel
        self.handler = handler
        self.pool = pool
        self.isDedicated = isDedicated
        // A closed connection lets go of its idle timer at once. The timer outlives the idle
        // period it was armed for (it is not cancelled when the connection is used again), so a
        // connection closed while in use (the server closed it mid-response, or after a
        // `Connection: close` response) would otherwise be held by it until it fired, a minute by
        // default, with its channel and the channel's pooled receive buffers (up to 64 KiB each
        // on a busy machine, where reads grow them): tens of MiB at a steady rate of closes.
        channel.closeFuture.whenComplete { [weak self] _ in self?.channelDidClose() }
    }

    func run(_ exchange: EngineExchange) {
        if channel.eventLoop.inEventLoop {
            startOnLoop(exchange)
        } else {
            handedOver.withLock { $0.append(exchange) }
            channel.eventLoop.execute { self.startHandedOver() }
        }
    }

    /// Starts the oldest exchange handed over from off the loop; each `run` queues one call.
    private func startHandedOver() {
        guard let exchange = handedOver.withLock({ $0.removeFirst() }) else { return }
        startOnLoop(exchange)
    }

    private func startOnLoop(_ exchange: EngineExchange) {
        idleSince = nil
        let reused = handler.startedExchanges > 0
        if reused { pool.logger.trace("reusing connection", metadata: ["connection": "\(id)", "origin": "\(key.authority)"]) }
        handler.start(exchange, reused: reused)
    }

    func cancelRunningExchanges() {
        if let exchange = handler.exchange { handler.cancel(exchange) }
        upgrade?.engineWillClose()
    }

    func exchangeHandler(_ handler: ExchangeHandler, switchesTo upgrade: any ProtocolUpgrade, switched: @escaping (Bool) -> Void) {
        pool.connectionDidSwitchProtocols(self)
        self.upgrade = upgrade
        idleTimer?.cancel()
        idleTimer = nil
        idleSince = nil
        let channel = channel
        let pipeline = channel.pipeline.syncOperations
        let buffer = ProtocolSwitchBuffer()
        do {
            pipeline.removeHandler(httpHandlers.readObserver, promise: nil)
            pipeline.removeHandler(httpHandlers.headerValidator, promise: nil)
            pipeline.removeHandler(httpHandlers.encoder, promise: nil)
            try pipeline.addHandler(buffer, position: .after(httpHandlers.decoder))
            pipeline.removeHandler(handler, promise: nil)
        } catch {
            channel.close(promise: nil)
            switched(false)
            return
        }
        // On its way out (a tick later) the decoder hands the bytes that came after the 101 to
        // the buffer; the new protocol's handlers go in once it is gone.
        let decoderRemoved = channel.eventLoop.makePromise(of: Void.self)
        pipeline.removeHandler(httpHandlers.decoder, promise: decoderRemoved)
        decoderRemoved.futureResult.assumeIsolated().whenComplete { result in
            do {
                try result.get()
                try upgrade.install(on: channel)
            } catch {
                channel.close(promise: nil)
                switched(false)
                return
            }
            switched(true)
            buffer.release()
        }
    }

    func exchangeHandlerDidFinish(_ handler: ExchangeHandler, reusable: Bool) {
        guard reusable, !isDedicated else {
            channel.close(promise: nil)
            return
        }
        pool.release(self)
    }

    func exchangeHandlerRequestWasUnprocessed(_ handler: ExchangeHandler, error: any Error) -> Bool {
        // HTTP/1.1 cannot tell; a reused connection that died before any response byte is
        // retried by the handler's own rule.
        false
    }

    func exchangeHandlerKeepsUnsolicitedInput(_ handler: ExchangeHandler) -> Bool {
        // Idle in the pool: taken out and closed, never used. Otherwise an exchange has it or is
        // about to (the pool handed it over, or has not got it yet and hands it to a waiter).
        !pool.takeIdle(self)
    }

    func becameIdle() {
        if channel.eventLoop.inEventLoop {
            idle()
        } else {
            channel.eventLoop.execute { self.idle() }
        }
    }

    /// Marks the connection idle in its pool; the idle timer closes it if it stays unused. One
    /// timer serves many idle periods: it re-arms itself instead of being cancelled on each use.
    private func idle() {
        if handler.serverSpokeFirst, pool.takeIdle(self) {
            // The server spoke before the pool had the connection, and nobody was waiting for it.
            channel.close(promise: nil)
            return
        }
        let now = pool.clock.now
        idleSince = now
        guard idleTimer == nil else { return }
        armIdleTimer(at: now + pool.idleConnectionTimeout)
    }

    private func armIdleTimer(at deadline: NIODeadline) {
        // Weakly: the pool keeps an open connection; the timer must not keep a closed one.
        guard channel.isActive else { return }
        idleTimer = pool.clock.schedule(on: channel.eventLoop, at: deadline) { [weak self] in self?.idleTimerFired() }
    }

    /// The channel closed (on its event loop): nothing is left for the idle timer to close.
    private func channelDidClose() {
        idleTimer?.cancel()
        idleTimer = nil
        idleSince = nil
    }

    private func idleTimerFired() {
        idleTimer = nil
        guard let idleSince else { return }
        let due = idleSince + pool.idleConnectionTimeout
        if due > pool.clock.now {
            armIdleTimer(at: due)
        } else if pool.takeIdle(self) {
            pool.logger.debug("closing idle connection", metadata: ["connection": "\(id)", "origin": "\(key.authority)"])
            channel.close(promise: nil)
        }
    }
}

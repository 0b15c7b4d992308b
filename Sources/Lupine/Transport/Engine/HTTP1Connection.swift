import NIOCore

/// A connection of the pool, whatever its protocol.
protocol PooledConnection: AnyObject, Sendable {
    /// Unique within the engine, for logs and the pool's bookkeeping.
    var id: Int { get }
    var key: ConnectionKey { get }
    var channel: any Channel { get }
    /// A connection of its own for one exchange, outside the per-key limit.
    var isDedicated: Bool { get }
    /// Starts `exchange` on this connection (from any thread).
    func run(_ exchange: EngineExchange)
    /// Fails the exchanges running on it with `URLError(.cancelled)` (on its event loop).
    func cancelRunningExchanges()
}

/// An HTTP/1.1 connection: one exchange at a time, kept alive and handed back to its pool
/// between exchanges, closed after `idleConnectionTimeout` unused.
final class HTTP1Connection: PooledConnection, ExchangeHandlerOwner, @unchecked Sendable {
    let id: Int
    let key: ConnectionKey
    let channel: any Channel
    /// Runs the exchanges; touched on the event loop only.
    private let handler: ExchangeHandler
    private let pool: ConnectionPool
    /// A connection of its own for one exchange (a value-type trust evaluator): closed after it.
    let isDedicated: Bool
    /// Keeps the evaluator, whose identity is part of `key`, alive as long as the connection.
    private let trustCheck: ServerTrustCheck?

    // Event-loop state.
    private var idleSince: NIODeadline?
    private var idleTimer: Scheduled<Void>?

    init(id: Int, key: ConnectionKey, channel: any Channel, handler: ExchangeHandler, pool: ConnectionPool, isDedicated: Bool,
         trustCheck: ServerTrustCheck?) {
        self.trustCheck = trustCheck
        self.id = id
        self.key = key
        self.channel = channel
        self.handler = handler
        self.pool = pool
        self.isDedicated = isDedicated
    }

    func run(_ exchange: EngineExchange) {
        if channel.eventLoop.inEventLoop {
            startOnLoop(exchange)
        } else {
            channel.eventLoop.execute { self.startOnLoop(exchange) }
        }
    }

    private func startOnLoop(_ exchange: EngineExchange) {
        idleSince = nil
        let reused = handler.startedExchanges > 0
        if reused { pool.logger.trace("reusing connection", metadata: ["connection": "\(id)", "origin": "\(key.authority)"]) }
        handler.start(exchange, reused: reused)
    }

    func cancelRunningExchanges() {
        if let exchange = handler.exchange { handler.cancel(exchange) }
    }

    func exchangeHandlerDidFinish(_ handler: ExchangeHandler, reusable: Bool) {
        guard reusable, !isDedicated else {
            channel.close(promise: nil)
            return
        }
        pool.release(self)
    }

    /// Marks the connection idle in its pool; the idle timer closes it if it stays unused. One
    /// timer serves many idle periods: it re-arms itself instead of being cancelled on each use.
    func becameIdle() {
        let now = pool.clock.now
        idleSince = now
        guard idleTimer == nil else { return }
        armIdleTimer(at: now + pool.idleConnectionTimeout)
    }

    private func armIdleTimer(at deadline: NIODeadline) {
        idleTimer = pool.clock.schedule(on: channel.eventLoop, at: deadline) { self.idleTimerFired() }
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

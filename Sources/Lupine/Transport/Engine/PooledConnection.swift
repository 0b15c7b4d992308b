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
    /// The pool has nothing for the connection to do: it starts counting its idle time, and closes
    /// after the engine's `idleConnectionTimeout` unused (from any thread).
    func becameIdle()
    /// Fails the exchanges running on it with `URLError(.cancelled)` (on its event loop).
    func cancelRunningExchanges()
}

/// A connection that carries several exchanges at once, each on a stream of its own (HTTP/2
/// today). The pool holds it in a `PoolEntry.MultiplexedSlot`: the streams its peer allows, those
/// leased, whether it is going away. The connection tells its pool when its peer changes the
/// limit (`streamLimitChanged`), when a stream ends (`streamEnded`), when the peer sends GOAWAY
/// (`connectionIsGoingAway`), and asks it before closing for being idle (`takeIdle`).
protocol MultiplexedConnection: PooledConnection {}

import NIOCore

/// The connections and waiting exchanges of one `ConnectionKey`: a pure value that the pool
/// changes under its lock. It decides; the pool acts on its answers (runs, connects, closes).
struct PoolEntry {
    /// Idle HTTP/1.1 connections, most recently used last.
    var idle: [HTTP1Connection] = []
    /// HTTP/2 connections of this key and their free streams.
    var multiplexed: [MultiplexedSlot] = []
    /// Open connections (HTTP/1.1 and HTTP/2), counted against the limit.
    var open = 0
    /// Connections being opened.
    var connecting = 0
    /// Exchanges waiting for a connection, oldest first.
    var waiters = CircularBuffer<EngineExchange>()
    /// A connection of this key negotiated h2: exchanges wait for its streams instead of opening
    /// more connections.
    var speaksHTTP2 = false
    /// The key's connections may negotiate h2 (TLS, ALPN offering it).
    var offersHTTP2 = false
    /// A connection of this key negotiated HTTP/1.1 before: more may be opened side by side. Until
    /// then a key that may speak h2 opens one connection at a time, so that a burst of requests
    /// to an h2 server becomes streams of one connection rather than one connection each.
    var knownHTTP1 = false
    /// The trust evaluator and client certificate of this key's exchanges (the key holds their
    /// identities; new connections need the instances).
    var tlsPolicy: TransportTLSPolicy?

    /// An HTTP/2 connection, how many concurrent streams its peer allows and how many are in use.
    struct MultiplexedSlot {
        var connection: HTTP2Connection
        var limit: Int
        var inUse = 0
        var hasRoom: Bool { inUse < limit }
    }

    /// What to do with an exchange that asks for a connection.
    enum LeaseDecision {
        /// Run it there now.
        case run(any PooledConnection)
        /// It waits; a new connection is to be opened.
        case connect
        /// It waits for a connection to free up.
        case wait
    }

    /// Streams assumed free on a new HTTP/2 connection until its SETTINGS say otherwise.
    static let initialStreamLimit = 100

    mutating func lease(_ exchange: EngineExchange, limit: Int) -> LeaseDecision {
        if tlsPolicy == nil { tlsPolicy = exchange.request.tlsPolicy }
        offersHTTP2 = exchange.key.usesTLS && !exchange.key.http1Only
        if let index = multiplexed.firstIndex(where: \.hasRoom) {
            multiplexed[index].inUse += 1
            return .run(multiplexed[index].connection)
        }
        while let connection = idle.popLast() {
            // A connection the server closed while idle is dropped here; its close callback
            // updates `open`.
            if connection.channel.isActive { return .run(connection) }
        }
        waiters.append(exchange)
        return startConnectIfPossible(limit: limit) ? .connect : .wait
    }

    /// Whether one more connection should be opened for the waiters (and counts it as opening).
    mutating func startConnectIfPossible(limit: Int) -> Bool {
        if speaksHTTP2 || (offersHTTP2 && !knownHTTP1), open + connecting > 0 { return false }
        guard waiters.count > connecting, open + connecting < limit else { return false }
        connecting += 1
        return true
    }

    /// How many connections to open for the waiters now (counted as opening).
    mutating func startConnects(limit: Int) -> Int {
        var count = 0
        while startConnectIfPossible(limit: limit) { count += 1 }
        return count
    }

    /// Puts a retried exchange first in line. It needs a new connection: when the limit is taken
    /// by idle connections, the oldest idle one is given up to make room (returned to be closed).
    mutating func requeueFirst(_ exchange: EngineExchange, limit: Int) -> (connect: Bool, close: HTTP1Connection?) {
        waiters.prepend(exchange)
        offersHTTP2 = exchange.key.usesTLS && !exchange.key.http1Only
        if open + connecting >= limit, !idle.isEmpty, !speaksHTTP2 {
            // The closing connection still counts as open until it has closed: for that moment
            // the key holds one connection more than its limit.
            connecting += 1
            return (true, idle.removeFirst())
        }
        return (startConnectIfPossible(limit: limit), nil)
    }

    @discardableResult
    mutating func removeWaiter(_ exchange: EngineExchange) -> Bool {
        guard let index = waiters.firstIndex(where: { $0 === exchange }) else { return false }
        waiters.remove(at: index)
        return true
    }

    /// Takes out the waiters whose wait ended by `now`, and tells the earliest deadline of those
    /// that stay.
    mutating func removeWaiters(expiredBy now: NIODeadline) -> (expired: [EngineExchange], earliestRemaining: NIODeadline?) {
        var expired: [EngineExchange] = []
        var earliest: NIODeadline?
        var remaining = CircularBuffer<EngineExchange>(initialCapacity: waiters.count)
        for waiter in waiters {
            guard let deadline = waiter.waitDeadline else {
                remaining.append(waiter)
                continue
            }
            if deadline <= now {
                expired.append(waiter)
            } else {
                remaining.append(waiter)
                earliest = min(earliest ?? deadline, deadline)
            }
        }
        if !expired.isEmpty { waiters = remaining }
        return (expired, earliest)
    }

    /// A connection opened: the exchanges it takes now (an HTTP/1.1 connection nobody waits for
    /// becomes idle), and how many more connections to open for the other waiters.
    mutating func connectionDidOpen(_ connection: any PooledConnection, limit: Int) -> (assigned: [EngineExchange], connects: Int) {
        connecting = max(0, connecting - 1)
        open += 1
        if let http2 = connection as? HTTP2Connection {
            speaksHTTP2 = true
            var slot = MultiplexedSlot(connection: http2, limit: Self.initialStreamLimit)
            var assigned: [EngineExchange] = []
            while slot.hasRoom, let waiter = waiters.popFirst() {
                assigned.append(waiter)
                slot.inUse += 1
            }
            multiplexed.append(slot)
            return (assigned, 0)
        }
        knownHTTP1 = true
        if let waiter = waiters.popFirst() { return ([waiter], startConnects(limit: limit)) }
        if let http1 = connection as? HTTP1Connection { idle.append(http1) }
        return ([], 0)
    }

    /// A connection could not be opened: the first waiter fails with its error. Returns whether
    /// another connection should be tried for the others.
    mutating func connectionFailed(limit: Int) -> (failed: EngineExchange?, connectAgain: Bool) {
        connecting = max(0, connecting - 1)
        let failed = waiters.popFirst()
        return (failed, startConnectIfPossible(limit: limit))
    }

    /// A connection closed: whether a new one should be opened for the waiters.
    mutating func connectionDidClose(_ connection: any PooledConnection, limit: Int, wasCounted: Bool) -> Bool {
        if wasCounted { open = max(0, open - 1) }
        idle.removeAll { $0 === connection }
        multiplexed.removeAll { $0.connection === connection }
        if multiplexed.isEmpty, open + connecting == 0 { speaksHTTP2 = false }
        return startConnectIfPossible(limit: limit)
    }

    /// An HTTP/1.1 connection is free again: the next waiter, or nil when it becomes idle.
    mutating func release(_ connection: HTTP1Connection) -> EngineExchange? {
        if let waiter = waiters.popFirst() { return waiter }
        idle.append(connection)
        return nil
    }

    /// A stream of `connection` ended: the next waiter takes it, or it counts as free.
    mutating func streamDidEnd(on connection: HTTP2Connection) -> EngineExchange? {
        guard let index = multiplexed.firstIndex(where: { $0.connection === connection }) else { return nil }
        if multiplexed[index].inUse <= multiplexed[index].limit, let waiter = waiters.popFirst() { return waiter }
        multiplexed[index].inUse -= 1
        return nil
    }

    /// The peer's limit on concurrent streams changed: waiters take the streams now free.
    mutating func updateStreamLimit(of connection: HTTP2Connection, to limit: Int) -> [EngineExchange] {
        guard let index = multiplexed.firstIndex(where: { $0.connection === connection }) else { return [] }
        multiplexed[index].limit = max(0, limit)
        var assigned: [EngineExchange] = []
        while multiplexed[index].hasRoom, let waiter = waiters.popFirst() {
            assigned.append(waiter)
            multiplexed[index].inUse += 1
        }
        return assigned
    }
}

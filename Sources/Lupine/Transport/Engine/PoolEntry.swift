import NIOCore

/// The connections and waiting exchanges of one `ConnectionKey`: a pure value that the pool
/// changes under its lock. It decides and answers with one `Action`; the pool carries it out (runs,
/// connects, closes, fails) after leaving the lock.
///
/// Connections count against the per-key limit while they can take exchanges: HTTP/1.1
/// connections, busy or idle, and multiplexed connections that are not going away. A multiplexed
/// connection that received GOAWAY takes no new streams and no longer counts, so a replacement
/// may open at once; it closes once its last stream ended.
///
/// Failed connects back off: after `n` failures in a row, no connect starts for
/// `backoff(afterFailures: n)`. When a connect fails and no connection of the key is open, the
/// exchanges that were waiting for it fail with its error: all of them but one for each connect
/// still under way, the oldest first.
struct PoolEntry {
    /// What the pool does after an event.
    enum Action {
        /// Nothing (the exchange waits for a connection being opened or to free up).
        case none
        /// Run the exchange on the connection now.
        case run(EngineExchange, on: any PooledConnection)
        /// Run the exchanges on the connection (its free streams, or the first exchange on a new
        /// HTTP/1.1 connection), then `connects`.
        case runAll([EngineExchange], on: any PooledConnection, then: Connects)
        /// The connection has nothing to do: its idle timer starts.
        case park(any PooledConnection)
        /// Close the connection, then `connects`.
        case close(any PooledConnection, then: Connects)
        /// Fail the exchanges with the error of the connect that failed, then `connects`.
        case fail([EngineExchange], then: Connects)
        /// Only `connects`.
        case connect(Connects)
    }

    /// New connections the pool opens for the waiters.
    enum Connects: Equatable {
        case none
        /// Open this many now.
        case open(Int)
        /// Call `connectsAfterBackoff(now:limit:)` at this time (failed connects back off).
        case after(NIODeadline)
    }

    /// A multiplexed connection of this key: how many concurrent streams its peer allows, how many
    /// are leased, and whether it is going away.
    struct MultiplexedSlot {
        let connection: any MultiplexedConnection
        var streamLimit: Int
        var streamsInUse = 0
        /// GOAWAY arrived (or the idle timer took it): no new streams.
        var isGoingAway = false

        var freeStreams: Int { isGoingAway ? 0 : max(0, streamLimit - streamsInUse) }
    }

    /// Idle HTTP/1.1 connections, most recently used last.
    private(set) var idle: [any PooledConnection] = []
    /// Multiplexed connections, those going away included until they close.
    private(set) var multiplexed: [MultiplexedSlot] = []
    /// Connections counted against the limit: HTTP/1.1 ones (busy or idle) and multiplexed ones
    /// not going away.
    private(set) var open = 0
    /// Connects under way.
    private(set) var connecting = 0
    /// Exchanges waiting for a connection, oldest first.
    private(set) var waiters = CircularBuffer<EngineExchange>()
    /// A connection of this key negotiated a multiplexed protocol: exchanges wait for its streams
    /// instead of opening more connections.
    private(set) var speaksHTTP2 = false
    /// The key's connections may negotiate h2 (TLS, ALPN offering it).
    private var offersHTTP2 = false
    /// A connection of this key negotiated HTTP/1.1 before: more may be opened side by side. Until
    /// then a key that may speak h2 opens one connection at a time, so that a burst of requests
    /// to an h2 server becomes streams of one connection rather than one connection each.
    private var knownHTTP1 = false
    /// Connects that failed in a row, and until when no new one starts.
    private(set) var consecutiveFailures = 0
    private(set) var backoffUntil: NIODeadline?
    /// A `Connects.after` was answered and its time has not come yet.
    private var backoffWakeArmed = false
    /// The trust evaluator and client certificate of this key's exchanges (the key holds their
    /// identities; new connections need the instances).
    private(set) var tlsPolicy: TransportTLSPolicy?

    /// Streams assumed free on a new multiplexed connection until its SETTINGS say otherwise.
    static let initialStreamLimit = 100

    /// How long no connect starts after `failures` failed in a row: 100 ms, doubling, at most 10 s.
    static func backoff(afterFailures failures: Int) -> TimeAmount {
        let exponent = min(max(failures - 1, 0), 7)
        return min(.milliseconds(100 << exponent), .seconds(10))
    }

    /// Whether the entry holds nothing worth keeping: no connection, connect, waiter or backoff.
    func isUnused(now: NIODeadline) -> Bool {
        open == 0 && connecting == 0 && waiters.isEmpty && idle.isEmpty && multiplexed.isEmpty
            && (backoffUntil.map { $0 <= now } ?? true)
    }

    // MARK: Exchanges

    /// `exchange` asks for a connection.
    mutating func lease(_ exchange: EngineExchange, limit: Int, now: NIODeadline) -> Action {
        if tlsPolicy == nil { tlsPolicy = exchange.request.tlsPolicy }
        offersHTTP2 = exchange.key.usesTLS && !exchange.key.http1Only
        if let index = multiplexed.firstIndex(where: { $0.freeStreams > 0 }) {
            multiplexed[index].streamsInUse += 1
            return .run(exchange, on: multiplexed[index].connection)
        }
        while let connection = idle.popLast() {
            // A connection the server closed while idle is dropped here; its close callback
            // updates `open`.
            if connection.channel.isActive { return .run(exchange, on: connection) }
        }
        waiters.append(exchange)
        return .connect(connects(limit: limit, now: now))
    }

    /// Puts a retried exchange first in line. It needs a new connection: when the limit is taken
    /// by idle HTTP/1.1 connections, the oldest is given up to make room.
    mutating func requeueFirst(_ exchange: EngineExchange, limit: Int, now: NIODeadline) -> Action {
        waiters.prepend(exchange)
        offersHTTP2 = exchange.key.usesTLS && !exchange.key.http1Only
        if open + connecting >= limit, !idle.isEmpty, !speaksHTTP2, !isBackingOff(now: now) {
            // The closing connection still counts as open until it has closed: for that moment
            // the key holds one connection more than its limit.
            connecting += 1
            return .close(idle.removeFirst(), then: .open(1))
        }
        return .connect(connects(limit: limit, now: now))
    }

    /// Takes `exchange` out of the line; false when it was not in it.
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

    /// Every waiter, taken out of the line (the engine shuts down).
    mutating func removeAllWaiters() -> [EngineExchange] {
        defer { waiters.removeAll() }
        return Array(waiters)
    }

    // MARK: Connects

    /// A connection opened: the exchanges it takes now, or it is idle.
    mutating func connectionOpened(_ connection: any PooledConnection, limit: Int, now: NIODeadline) -> Action {
        connecting = max(0, connecting - 1)
        consecutiveFailures = 0
        backoffUntil = nil
        open += 1
        if let multiplexedConnection = connection as? any MultiplexedConnection {
            speaksHTTP2 = true
            var slot = MultiplexedSlot(connection: multiplexedConnection, streamLimit: Self.initialStreamLimit)
            var assigned: [EngineExchange] = []
            while slot.freeStreams > 0, let waiter = waiters.popFirst() {
                assigned.append(waiter)
                slot.streamsInUse += 1
            }
            multiplexed.append(slot)
            return assigned.isEmpty ? .park(connection) : .runAll(assigned, on: connection, then: .none)
        }
        knownHTTP1 = true
        if let waiter = waiters.popFirst() { return .runAll([waiter], on: connection, then: connects(limit: limit, now: now)) }
        idle.append(connection)
        return .park(connection)
    }

    /// A connect failed: unless a connection of the key is open to serve them, the exchanges
    /// waiting for it fail with its error (all but one for each connect still under way, oldest
    /// first); the next connect backs off.
    mutating func connectFailed(limit: Int, now: NIODeadline) -> Action {
        connecting = max(0, connecting - 1)
        consecutiveFailures += 1
        backoffUntil = now + Self.backoff(afterFailures: consecutiveFailures)
        var failed: [EngineExchange] = []
        if open == 0 {
            while waiters.count > connecting, let waiter = waiters.popFirst() { failed.append(waiter) }
        }
        return .fail(failed, then: connects(limit: limit, now: now))
    }

    /// The backoff after failed connects is over.
    mutating func connectsAfterBackoff(limit: Int, now: NIODeadline) -> Connects {
        backoffWakeArmed = false
        return connects(limit: limit, now: now)
    }

    private func isBackingOff(now: NIODeadline) -> Bool {
        backoffUntil.map { now < $0 } ?? false
    }

    /// The connects to start for the waiters now (counted as under way), or when to try again
    /// after failures.
    private mutating func connects(limit: Int, now: NIODeadline) -> Connects {
        var count = 0
        while wantsConnect(limit: limit) {
            if let backoffUntil, now < backoffUntil {
                guard count == 0, !backoffWakeArmed else { break }
                backoffWakeArmed = true
                return .after(backoffUntil)
            }
            connecting += 1
            count += 1
        }
        return count == 0 ? .none : .open(count)
    }

    /// Whether one more connection should be opened for the waiters.
    private func wantsConnect(limit: Int) -> Bool {
        if speaksHTTP2 || (offersHTTP2 && !knownHTTP1), open + connecting > 0 { return false }
        return waiters.count > connecting && open + connecting < limit
    }

    // MARK: Connections

    /// A connection closed. `wasCounted` is false for an HTTP/1.1 connection that had left the
    /// entry before (it switched protocols); a multiplexed one counts while it is not going away.
    mutating func connectionClosed(_ connection: any PooledConnection, wasCounted: Bool, limit: Int, now: NIODeadline) -> Connects {
        if connection is any MultiplexedConnection {
            if let index = multiplexed.firstIndex(where: { $0.connection === connection }) {
                if !multiplexed[index].isGoingAway { open = max(0, open - 1) }
                multiplexed.remove(at: index)
            }
        } else {
            if wasCounted { open = max(0, open - 1) }
            idle.removeAll { $0 === connection }
        }
        if multiplexed.isEmpty, open + connecting == 0 { speaksHTTP2 = false }
        return connects(limit: limit, now: now)
    }

    /// An HTTP/1.1 connection switched protocols: it leaves the entry (and the limit).
    mutating func connectionLeft(_ connection: any PooledConnection, limit: Int, now: NIODeadline) -> Connects {
        connectionClosed(connection, wasCounted: true, limit: limit, now: now)
    }

    /// An HTTP/1.1 connection is free again: the next waiter runs on it, or it becomes idle.
    mutating func release(_ connection: any PooledConnection) -> Action {
        if let waiter = waiters.popFirst() { return .run(waiter, on: connection) }
        idle.append(connection)
        return .park(connection)
    }

    /// Takes an idle HTTP/1.1 connection out, to be closed; false when it is not idle (in use).
    mutating func takeIdle(_ connection: any PooledConnection) -> Bool {
        guard let index = idle.firstIndex(where: { $0 === connection }) else { return false }
        idle.remove(at: index)
        return true
    }

    // MARK: Multiplexed connections

    /// A stream of `connection` ended: a waiter takes it, or the connection closes when it is
    /// going away and this was its last stream, or it is idle.
    mutating func streamEnded(on connection: any MultiplexedConnection) -> Action {
        guard let index = multiplexed.firstIndex(where: { $0.connection === connection }) else { return .none }
        multiplexed[index].streamsInUse = max(0, multiplexed[index].streamsInUse - 1)
        if multiplexed[index].freeStreams > 0, let waiter = waiters.popFirst() {
            multiplexed[index].streamsInUse += 1
            return .run(waiter, on: connection)
        }
        guard multiplexed[index].streamsInUse == 0 else { return .none }
        if multiplexed[index].isGoingAway {
            multiplexed.remove(at: index)
            return .close(connection, then: .none)
        }
        return .park(connection)
    }

    /// The peer's limit on concurrent streams changed: waiters take the streams now free.
    mutating func streamLimitChanged(of connection: any MultiplexedConnection, to limit: Int) -> Action {
        guard let index = multiplexed.firstIndex(where: { $0.connection === connection }) else { return .none }
        multiplexed[index].streamLimit = max(0, limit)
        var assigned: [EngineExchange] = []
        while multiplexed[index].freeStreams > 0, let waiter = waiters.popFirst() {
            assigned.append(waiter)
            multiplexed[index].streamsInUse += 1
        }
        return assigned.isEmpty ? .none : .runAll(assigned, on: connection, then: .none)
    }

    /// `connection` received GOAWAY: it takes no new streams and no longer counts, so a
    /// replacement may open for the waiters; it closes now if no stream runs on it, else once
    /// its last stream ended.
    mutating func goingAway(_ connection: any MultiplexedConnection, limit: Int, now: NIODeadline) -> Action {
        guard let index = multiplexed.firstIndex(where: { $0.connection === connection }) else { return .none }
        if !multiplexed[index].isGoingAway {
            multiplexed[index].isGoingAway = true
            open = max(0, open - 1)
        }
        let connects = connects(limit: limit, now: now)
        if multiplexed[index].streamsInUse == 0 {
            multiplexed.remove(at: index)
            return .close(connection, then: connects)
        }
        return .connect(connects)
    }

    /// The idle timer of `connection` fired: true when no stream is leased, and it is taken out
    /// to be closed.
    mutating func takeIdle(_ connection: any MultiplexedConnection) -> Bool {
        guard let index = multiplexed.firstIndex(where: { $0.connection === connection }),
              multiplexed[index].streamsInUse == 0 else { return false }
        if !multiplexed[index].isGoingAway { open = max(0, open - 1) }
        multiplexed.remove(at: index)
        return true
    }
}

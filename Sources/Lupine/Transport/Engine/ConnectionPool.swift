import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import NIOCore
import Synchronization

/// The engine's connections, per `ConnectionKey`: idle HTTP/1.1 connections kept alive for reuse,
/// HTTP/2 connections shared by concurrent streams, connections being opened, and the exchanges
/// waiting for one, at most `maximumConnectionsPerHost` connections per key.
///
/// A new connection goes to the first exchange waiting when it is ready, not necessarily to the
/// one that asked for it: whichever connection frees up first serves the oldest request. The
/// state sits behind one lock, taken once to lease and once to release on the common path.
final class ConnectionPool: Sendable {
    private struct State {
        var entries: [ConnectionKey: PoolEntry] = [:]
        var isShutDown = false
        var nextConnectionID = 0
        var counts = ConnectionCounts()
        /// Every open connection, for shutdown.
        var connections: [Int: any PooledConnection] = [:]
        /// Connections that switched protocols: open, but no longer counted in their key's entry.
        var switched: Set<Int> = []
        /// When the wait sweep is armed to run (see `boundWait(of:)`), and its timer; nil when
        /// it is not armed.
        var waitSweep: NIODeadline?
        var waitSweepTimer: Scheduled<Void>?

        /// Disarms the wait sweep once nothing waits (its timer is returned, to be cancelled
        /// outside the lock): called where exchanges leave the queue on the event loop, so that
        /// an idle pool keeps no timer.
        mutating func disarmWaitSweepIfNothingWaits() -> Scheduled<Void>? {
            guard waitSweep != nil, entries.values.allSatisfy({ $0.waiters.isEmpty }) else { return nil }
            waitSweep = nil
            defer { waitSweepTimer = nil }
            return waitSweepTimer
        }
    }

    let clock: any EngineClock
    let logger: Logger
    let idleConnectionTimeout: TimeAmount
    private let maximumConnectionsPerKey: Int
    private let eventLoopGroup: any EventLoopGroup
    private let factory: ConnectionFactory
    private let state = Mutex(State())
    /// Called with the new counts whenever a connection opens or closes (see `ConnectionCounts`):
    /// one per Session that records metrics on this engine.
    private let countsObservers = Mutex<[@Sendable (ConnectionCounts) -> Void]>([])

    init(configuration: ConnectionEngine.Configuration) {
        clock = configuration.clock
        logger = configuration.logger
        idleConnectionTimeout = .lupineSeconds(configuration.idleConnectionTimeout)
        maximumConnectionsPerKey = max(1, configuration.maximumConnectionsPerHost)
        eventLoopGroup = configuration.eventLoopGroup
        factory = ConnectionFactory(configuration: configuration)
    }

    var anyEventLoop: any EventLoop { eventLoopGroup.any() }

    // MARK: Exchanges

    /// Runs `exchange` on an idle connection or stream, or queues it until one is ready.
    func execute(_ exchange: EngineExchange) {
        guard exchange.beginWaiting() else {
            exchange.finish(error: exchange.failure(.cancelled))
            return
        }
        guard exchange.shareable else {
            openDedicatedConnection(for: exchange)
            return
        }
        let decision = state.withLock { state -> PoolEntry.LeaseDecision? in
            guard !state.isShutDown else { return nil }
            return state.entries[exchange.key, default: PoolEntry()].lease(exchange, limit: maximumConnectionsPerKey)
        }
        switch decision {
        case let .run(connection)?:
            connection.run(exchange)
        case .wait?:
            boundWait(of: exchange)
        case .connect?:
            boundWait(of: exchange)
            openConnection(for: exchange.key)
        case nil:
            exchange.finish(error: exchange.failure(.cancelled))
        }
    }

    /// Sends `exchange` again, first in line, after its reused connection died before answering.
    func retry(_ exchange: EngineExchange) {
        logger.debug("retrying on a new connection", metadata: ["origin": "\(exchange.key.authority)"])
        guard exchange.shareable else {
            openDedicatedConnection(for: exchange)
            return
        }
        let decision = state.withLock { state -> (connect: Bool, close: HTTP1Connection?)? in
            guard !state.isShutDown else { return nil }
            return state.entries[exchange.key, default: PoolEntry()].requeueFirst(exchange, limit: maximumConnectionsPerKey)
        }
        guard let decision else {
            exchange.finish(error: exchange.failure(.cancelled))
            return
        }
        boundWait(of: exchange)
        decision.close?.channel.close(promise: nil)
        if decision.connect { openConnection(for: exchange.key) }
    }

    /// Takes `exchange` out of the queue (cancelled or timed out while waiting).
    func removeWaiter(_ exchange: EngineExchange) {
        state.withLock { state in
            _ = state.entries[exchange.key]?.removeWaiter(exchange)
        }
    }

    /// Bounds the wait for a connection by the exchange's idle timeout and resource deadline.
    ///
    /// One sweep per pool, armed for the earliest deadline of its waiters, ends the waits that ran
    /// out: a timer per waiting exchange, scheduled and cancelled from the caller's thread (each
    /// a lock and an event loop wake-up), cost 7% of the CPU time of 64 concurrent small GETs.
    /// Waiters arrive in order with equal timeouts, so the sweep is rarely re-armed.
    private func boundWait(of exchange: EngineExchange) {
        var limit = TimeAmount.lupineSeconds(exchange.request.idleTimeout)
        if let deadline = exchange.request.deadline {
            limit = min(limit, .lupineSeconds(deadline.timeIntervalSinceNow))
        }
        let deadline = clock.now + limit
        exchange.setWaitDeadline(deadline)
        let arms = state.withLock { state -> Bool in
            guard state.waitSweep.map({ deadline < $0 }) ?? true else { return false }
            state.waitSweep = deadline
            return true
        }
        if arms { scheduleWaitSweep(at: deadline) }
    }

    /// Whenever `waitSweep` is set to a time, a sweep is scheduled for it; a sweep whose time was
    /// replaced by an earlier one, or that was disarmed, does nothing.
    private func scheduleWaitSweep(at deadline: NIODeadline) {
        let timer = clock.schedule(on: anyEventLoop, at: deadline) { [weak self] in
            self?.sweepWaiters(armedFor: deadline)
        }
        state.withLock { state in
            if state.waitSweep == deadline { state.waitSweepTimer = timer }
        }
    }

    private func sweepWaiters(armedFor deadline: NIODeadline) {
        let now = clock.now
        let (expired, next) = state.withLock { state -> ([EngineExchange], NIODeadline?) in
            guard state.waitSweep == deadline else { return ([], nil) }
            state.waitSweepTimer = nil
            var expired: [EngineExchange] = []
            var earliest: NIODeadline?
            for key in Array(state.entries.keys) {
                guard let (ended, remaining) = state.entries[key]?.removeWaiters(expiredBy: now) else { continue }
                expired += ended
                if let remaining { earliest = min(earliest ?? remaining, remaining) }
            }
            state.waitSweep = earliest
            return (expired, earliest)
        }
        if let next { scheduleWaitSweep(at: next) }
        for exchange in expired {
            logger.debug("no connection in time", metadata: ["origin": "\(exchange.key.authority)"])
            exchange.finish(error: exchange.failure(.timedOut))
        }
    }

    // MARK: Connections

    private func openConnection(for key: ConnectionKey) {
        let (id, tlsPolicy) = state.withLock { state -> (Int, TransportTLSPolicy?) in
            state.nextConnectionID += 1
            return (state.nextConnectionID, state.entries[key]?.tlsPolicy)
        }
        logger.debug("opening connection", metadata: ["connection": "\(id)", "origin": "\(key.authority)",
                                                      "proxy": "\(key.proxy.map { "\($0.host):\($0.port)" } ?? "none")"])
        factory.connect(key: key, tlsPolicy: tlsPolicy, id: id, pool: self, eventLoop: anyEventLoop, isDedicated: false).whenComplete { result in
            switch result {
            case let .success(connection): self.connectionDidOpen(connection)
            case let .failure(error): self.connectionFailed(key: key, id: id, error: error)
            }
        }
    }

    private func connectionDidOpen(_ connection: any PooledConnection) {
        let key = connection.key
        logger.debug("connection open", metadata: ["connection": "\(connection.id)", "origin": "\(key.authority)",
                                                   "protocol": "\(connection is HTTP2Connection ? "h2" : "http/1.1")"])
        var sweep: Scheduled<Void>?
        let (assigned, connects, counts) = state.withLock { state -> ([EngineExchange], Int, ConnectionCounts?) in
            guard !state.isShutDown else { return ([], 0, nil) }
            state.connections[connection.id] = connection
            state.counts.open += 1
            state.counts.opened += 1
            let (assigned, connects) = state.entries[key, default: PoolEntry()].connectionDidOpen(connection, limit: maximumConnectionsPerKey)
            sweep = state.disarmWaitSweepIfNothingWaits()
            return (assigned, connects, state.counts)
        }
        sweep?.cancel()
        guard let counts else {
            connection.channel.close(promise: nil)
            return
        }
        // Registered once the connection is counted: a connection that already closed runs this
        // at once, and must find itself there to be taken off.
        connection.channel.closeFuture.whenComplete { _ in self.connectionDidClose(connection) }
        report(counts)
        if assigned.isEmpty, let http1 = connection as? HTTP1Connection {
            http1.channel.eventLoop.execute { http1.becameIdle() }
        }
        for exchange in assigned { connection.run(exchange) }
        for _ in 0..<connects { openConnection(for: key) }
    }

    private func connectionFailed(key: ConnectionKey, id: Int, error: any Error) {
        logger.debug("connection failed", metadata: ["connection": "\(id)", "origin": "\(key.authority)",
                                                     "error": "\(error)"])
        let (failed, connectAgain) = state.withLock { state -> (EngineExchange?, Bool) in
            state.entries[key]?.connectionFailed(limit: maximumConnectionsPerKey) ?? (nil, false)
        }
        if let failed {
            failed.finish(error: ConnectionFactory.urlError(for: error, url: failed.request.url, key: key))
        }
        if connectAgain { openConnection(for: key) }
    }

    private func connectionDidClose(_ connection: any PooledConnection) {
        let key = connection.key
        logger.debug("connection closed", metadata: ["connection": "\(connection.id)", "origin": "\(key.authority)"])
        let (connect, counts) = state.withLock { state -> (Bool, ConnectionCounts?) in
            guard state.connections.removeValue(forKey: connection.id) != nil else { return (false, nil) }
            state.counts.open -= 1
            state.counts.closed += 1
            let leftBefore = state.switched.remove(connection.id) != nil
            guard !state.isShutDown, !connection.isDedicated, !leftBefore else { return (false, state.counts) }
            let connect = state.entries[key]?.connectionDidClose(connection, limit: maximumConnectionsPerKey, wasCounted: true) ?? false
            return (connect, state.counts)
        }
        if let counts { report(counts) }
        if connect { openConnection(for: key) }
    }

    /// An HTTP/1.1 connection finished an exchange and can take another (called on its loop).
    func release(_ connection: HTTP1Connection) {
        let (next, sweep) = state.withLock { state -> (EngineExchange??, Scheduled<Void>?) in
            guard !state.isShutDown else { return (.none, nil) }
            let next = state.entries[connection.key, default: PoolEntry()].release(connection)
            return (.some(next), state.disarmWaitSweepIfNothingWaits())
        }
        sweep?.cancel()
        switch next {
        case .none:
            connection.channel.close(promise: nil)
        case .some(nil):
            connection.becameIdle()
        case let .some(exchange?):
            connection.run(exchange)
        }
    }

    /// `connection` switched protocols (a WebSocket): it leaves its key's entry, making room for
    /// a new connection if exchanges wait, and stays open until it closes.
    func connectionDidSwitchProtocols(_ connection: HTTP1Connection) {
        let connect = state.withLock { state -> Bool in
            guard state.connections[connection.id] != nil else { return false }
            state.switched.insert(connection.id)
            guard !state.isShutDown, !connection.isDedicated else { return false }
            return state.entries[connection.key]?.connectionDidClose(connection, limit: maximumConnectionsPerKey, wasCounted: true) ?? false
        }
        logger.debug("connection switched protocols", metadata: ["connection": "\(connection.id)", "origin": "\(connection.key.authority)"])
        if connect { openConnection(for: connection.key) }
    }

    /// Takes an idle connection out of the pool so that it can be closed; false when it is in use.
    func takeIdle(_ connection: HTTP1Connection) -> Bool {
        state.withLock { state in
            guard let index = state.entries[connection.key]?.idle.firstIndex(where: { $0 === connection }) else { return false }
            state.entries[connection.key]?.idle.remove(at: index)
            return true
        }
    }

    /// An HTTP/2 stream of `connection` ended: the stream is free for a waiting exchange.
    func streamDidEnd(on connection: HTTP2Connection) {
        let next = state.withLock { state -> EngineExchange? in
            guard !state.isShutDown else { return nil }
            return state.entries[connection.key]?.streamDidEnd(on: connection)
        }
        next.map(connection.run)
    }

    /// The peer changed how many concurrent streams `connection` takes (its SETTINGS).
    func updateStreamLimit(of connection: HTTP2Connection, to limit: Int) {
        let assigned = state.withLock { state -> [EngineExchange] in
            guard !state.isShutDown else { return [] }
            return state.entries[connection.key]?.updateStreamLimit(of: connection, to: limit) ?? []
        }
        for exchange in assigned { connection.run(exchange) }
    }

    /// `connection` received GOAWAY: it takes no new streams.
    func connectionIsGoingAway(_ connection: HTTP2Connection) {
        state.withLock { state in
            state.entries[connection.key]?.multiplexed.removeAll { $0.connection === connection }
        }
    }

    private func openDedicatedConnection(for exchange: EngineExchange) {
        let id = state.withLock { state -> Int in
            state.nextConnectionID += 1
            return state.nextConnectionID
        }
        // No wait bound: the exchange is in no queue, and the connect timeout bounds the opening.
        factory.connect(key: exchange.key, tlsPolicy: exchange.request.tlsPolicy, id: id, pool: self, eventLoop: anyEventLoop,
                        isDedicated: true).whenComplete { result in
            switch result {
            case let .success(connection):
                let counts = self.state.withLock { state -> ConnectionCounts in
                    state.connections[connection.id] = connection
                    state.counts.open += 1
                    state.counts.opened += 1
                    return state.counts
                }
                self.report(counts)
                connection.channel.closeFuture.whenComplete { _ in self.connectionDidClose(connection) }
                connection.run(exchange)
            case let .failure(error):
                exchange.finish(error: ConnectionFactory.urlError(for: error, url: exchange.request.url, key: exchange.key))
            }
        }
    }

    // MARK: Counts and shutdown

    var counts: ConnectionCounts {
        state.withLock { $0.counts }
    }

    func observeCounts(_ observer: @escaping @Sendable (ConnectionCounts) -> Void) {
        countsObservers.withLock { $0.append(observer) }
    }

    private func report(_ counts: ConnectionCounts) {
        for observer in countsObservers.withLock({ $0 }) { observer(counts) }
    }

    /// Fails waiting exchanges, cancels running ones and closes every connection; `completion`
    /// runs once they are all closed.
    func shutdown(completion: @escaping @Sendable () -> Void) {
        let (waiters, connections) = state.withLock { state -> ([EngineExchange], [any PooledConnection]) in
            guard !state.isShutDown else { return ([], []) }
            state.isShutDown = true
            let waiters = state.entries.values.flatMap { Array($0.waiters) }
            state.entries = [:]
            return (waiters, Array(state.connections.values))
        }
        for exchange in waiters { exchange.finish(error: exchange.failure(.cancelled)) }
        guard !connections.isEmpty else {
            completion()
            return
        }
        let closed = connections.map { connection in
            connection.channel.eventLoop.flatSubmit {
                connection.cancelRunningExchanges()
                return connection.channel.close().recover { _ in }
            }
        }
        EventLoopFuture.andAllComplete(closed, on: anyEventLoop).whenComplete { _ in completion() }
    }
}

/// How many connections the engine has: open now, opened and closed since it started. Read by
/// gauges (see `ConnectionEngine.connectionCounts`).
struct ConnectionCounts: Sendable, Equatable {
    var open = 0
    var opened = 0
    var closed = 0
}

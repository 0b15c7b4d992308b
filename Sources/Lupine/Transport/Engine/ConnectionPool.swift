import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import NIOCore
import Synchronization

/// The engine's connections, per `ConnectionKey`: idle HTTP/1.1 connections kept alive for reuse,
/// multiplexed (HTTP/2) connections shared by concurrent streams, connections being opened, and
/// the exchanges waiting for one, at most `maximumConnectionsPerHost` connections per key.
///
/// Each key's `PoolEntry` decides under the pool's lock and answers with one action, which the
/// pool carries out after leaving it: the lock is taken once to lease and once to release on the
/// common path. A new connection goes to the first exchange waiting when it is ready, not
/// necessarily to the one that asked for it: whichever connection frees up first serves the
/// oldest request. An entry left with nothing (no connection, waiter or backoff) is dropped.
final class ConnectionPool: Sendable {
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
        let now = clock.now
        let action = state.withLock { state -> PoolEntry.Action? in
            guard !state.isShutDown else { return nil }
            return state.entries[exchange.key, default: PoolEntry()].lease(exchange, limit: maximumConnectionsPerKey, now: now)
        }
        guard let action else {
            exchange.finish(error: exchange.failure(.cancelled))
            return
        }
        if case .run = action {} else { boundWait(of: exchange) }
        perform(action, for: exchange.key)
    }

    /// Sends `exchange` again, first in line, after its connection died before answering or its
    /// server refused it unprocessed.
    func retry(_ exchange: EngineExchange) {
        logger.debug("retrying on a new connection", metadata: ["origin": "\(exchange.key.authority)"])
        guard exchange.shareable else {
            openDedicatedConnection(for: exchange)
            return
        }
        let now = clock.now
        let action = state.withLock { state -> PoolEntry.Action? in
            guard !state.isShutDown else { return nil }
            return state.entries[exchange.key, default: PoolEntry()].requeueFirst(exchange, limit: maximumConnectionsPerKey, now: now)
        }
        guard let action else {
            exchange.finish(error: exchange.failure(.cancelled))
            return
        }
        boundWait(of: exchange)
        perform(action, for: exchange.key)
    }

    /// Takes `exchange` out of the queue (cancelled or timed out while waiting).
    func removeWaiter(_ exchange: EngineExchange) {
        let now = clock.now
        state.withLock { state in
            _ = state.entries[exchange.key]?.removeWaiter(exchange)
            state.pruneEntry(exchange.key, now: now)
        }
    }

    /// Carries out what an entry decided. `error` is the failed connect's, for `.fail`.
    private func perform(_ action: PoolEntry.Action, for key: ConnectionKey, error: (any Error)? = nil) {
        switch action {
        case .none:
            break
        case let .run(exchange, connection):
            connection.run(exchange)
        case let .runAll(exchanges, connection, connects):
            for exchange in exchanges { connection.run(exchange) }
            perform(connects, for: key)
        case let .park(connection):
            connection.becameIdle()
        case let .close(connection, connects):
            logger.debug("closing connection", metadata: ["connection": "\(connection.id)", "origin": "\(key.authority)"])
            connection.channel.close(promise: nil)
            perform(connects, for: key)
        case let .fail(exchanges, connects):
            for exchange in exchanges {
                exchange.finish(error: error.map { ConnectionFactory.urlError(for: $0, url: exchange.request.url, key: key) }
                    ?? exchange.failure(.cannotConnectToHost))
            }
            perform(connects, for: key)
        case let .connect(connects):
            perform(connects, for: key)
        }
    }

    private func perform(_ connects: PoolEntry.Connects, for key: ConnectionKey) {
        switch connects {
        case .none:
            break
        case let .open(count):
            for _ in 0..<count { openConnection(for: key) }
        case let .after(deadline):
            logger.debug("backing off after failed connects", metadata: ["origin": "\(key.authority)"])
            _ = clock.schedule(on: anyEventLoop, at: deadline) { [weak self] in self?.backoffEnded(for: key) }
        }
    }

    private func backoffEnded(for key: ConnectionKey) {
        let now = clock.now
        let connects = state.withLock { state -> PoolEntry.Connects in
            guard !state.isShutDown, state.entries[key] != nil else { return .none }
            defer { state.pruneEntry(key, now: now) }
            return state.entries[key]?.connectsAfterBackoff(limit: maximumConnectionsPerKey, now: now) ?? .none
        }
        perform(connects, for: key)
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
                state.pruneEntry(key, now: now)
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
        let started = state.withLock { state -> (id: Int, tlsPolicy: TransportTLSPolicy?)? in
            guard !state.isShutDown else { return nil }
            state.nextConnectionID += 1
            return (state.nextConnectionID, state.entries[key]?.tlsPolicy)
        }
        guard let (id, tlsPolicy) = started else { return }
        logger.debug("opening connection", metadata: ["connection": "\(id)", "origin": "\(key.authority)",
                                                      "proxy": "\(key.proxy.map { "\($0.host):\($0.port)" } ?? "none")"])
        let attempt = factory.connect(key: key, tlsPolicy: tlsPolicy, id: id, pool: self, eventLoop: anyEventLoop, isDedicated: false)
        track(attempt, id: id)
        attempt.connection.whenComplete { result in
            switch result {
            case let .success(connection): self.connectionDidOpen(connection)
            case let .failure(error): self.connectFailed(key: key, id: id, error: error)
            }
        }
    }

    /// Registers a connect under way, so that shutdown can give it up and wait for it; given up
    /// at once when the pool is already shut down.
    private func track(_ attempt: ConnectionFactory.Attempt, id: Int) {
        let shutDown = state.withLock { state -> Bool in
            guard !state.isShutDown else { return true }
            state.attempts[id] = attempt.abort
            return false
        }
        if shutDown { attempt.abort() }
    }

    /// A connect ended, one way or the other: it no longer holds shutdown up, once `closed` is
    /// (its connection, when the pool was shut down meanwhile).
    private func attemptEnded(id: Int, closed: EventLoopFuture<Void>?) {
        let shutdownWaits = state.withLock { state -> Bool in
            state.attempts.removeValue(forKey: id)
            return state.attemptsEndingForShutdown.remove(id) != nil
        }
        guard shutdownWaits else { return }
        let finish: @Sendable () -> Void = {
            let completions = self.state.withLock { $0.shutdownStepDone() }
            for completion in completions { completion() }
        }
        if let closed { closed.whenComplete { _ in finish() } } else { finish() }
    }

    private func connectionDidOpen(_ connection: any PooledConnection) {
        let key = connection.key
        let now = clock.now
        logger.debug("connection open", metadata: ["connection": "\(connection.id)", "origin": "\(key.authority)",
                                                   "protocol": "\(connection is any MultiplexedConnection ? "h2" : "http/1.1")"])
        var sweep: Scheduled<Void>?
        let decision = state.withLock { state -> (PoolEntry.Action, ConnectionCounts)? in
            guard !state.isShutDown else { return nil }
            state.connections[connection.id] = connection
            state.counts.open += 1
            state.counts.opened += 1
            let action = state.entries[key, default: PoolEntry()].connectionOpened(connection, limit: maximumConnectionsPerKey, now: now)
            sweep = state.disarmWaitSweepIfNothingWaits()
            return (action, state.counts)
        }
        sweep?.cancel()
        guard let (action, counts) = decision else {
            connection.channel.close(promise: nil)
            attemptEnded(id: connection.id, closed: connection.channel.closeFuture)
            return
        }
        attemptEnded(id: connection.id, closed: nil)
        // Registered once the connection is counted: a connection that already closed runs this
        // at once, and must find itself there to be taken off.
        connection.channel.closeFuture.whenComplete { _ in self.connectionDidClose(connection) }
        report(counts)
        perform(action, for: key)
    }

    private func connectFailed(key: ConnectionKey, id: Int, error: any Error) {
        logger.debug("connection failed", metadata: ["connection": "\(id)", "origin": "\(key.authority)", "error": "\(error)"])
        attemptEnded(id: id, closed: nil)
        let now = clock.now
        let action = state.withLock { state -> PoolEntry.Action in
            guard !state.isShutDown, state.entries[key] != nil else { return .none }
            defer { state.pruneEntry(key, now: now) }
            return state.entries[key]?.connectFailed(limit: maximumConnectionsPerKey, now: now) ?? .none
        }
        perform(action, for: key, error: error)
    }

    private func connectionDidClose(_ connection: any PooledConnection) {
        let key = connection.key
        let now = clock.now
        logger.debug("connection closed", metadata: ["connection": "\(connection.id)", "origin": "\(key.authority)"])
        let (connects, counts) = state.withLock { state -> (PoolEntry.Connects, ConnectionCounts?) in
            guard state.connections.removeValue(forKey: connection.id) != nil else { return (.none, nil) }
            state.counts.open -= 1
            state.counts.closed += 1
            let leftBefore = state.switched.remove(connection.id) != nil
            guard !state.isShutDown, !connection.isDedicated, state.entries[key] != nil else { return (.none, state.counts) }
            defer { state.pruneEntry(key, now: now) }
            let connects = state.entries[key]?.connectionClosed(connection, wasCounted: !leftBefore, limit: maximumConnectionsPerKey,
                                                                now: now) ?? .none
            return (connects, state.counts)
        }
        if let counts { report(counts) }
        perform(connects, for: key)
    }

    /// An HTTP/1.1 connection finished an exchange and can take another (called on its loop).
    func release(_ connection: HTTP1Connection) {
        let decision = state.withLock { state -> (PoolEntry.Action, Scheduled<Void>?)? in
            guard !state.isShutDown else { return nil }
            let action = state.entries[connection.key, default: PoolEntry()].release(connection)
            return (action, state.disarmWaitSweepIfNothingWaits())
        }
        guard let (action, sweep) = decision else {
            connection.channel.close(promise: nil)
            return
        }
        sweep?.cancel()
        perform(action, for: connection.key)
    }

    /// `connection` switched protocols (a WebSocket): it leaves its key's entry, making room for
    /// a new connection if exchanges wait, and stays open until it closes.
    func connectionDidSwitchProtocols(_ connection: HTTP1Connection) {
        let now = clock.now
        let connects = state.withLock { state -> PoolEntry.Connects in
            guard state.connections[connection.id] != nil else { return .none }
            state.switched.insert(connection.id)
            guard !state.isShutDown, !connection.isDedicated else { return .none }
            return state.entries[connection.key]?.connectionLeft(connection, limit: maximumConnectionsPerKey, now: now) ?? .none
        }
        logger.debug("connection switched protocols", metadata: ["connection": "\(connection.id)", "origin": "\(connection.key.authority)"])
        perform(connects, for: connection.key)
    }

    /// Takes an idle connection out of the pool so that it can be closed; false when it is in use.
    func takeIdle(_ connection: HTTP1Connection) -> Bool {
        state.withLock { state in
            state.entries[connection.key]?.takeIdle(connection) ?? false
        }
    }

    /// Takes a multiplexed connection whose idle timer fired out of the pool, to be closed; false
    /// when a stream of it is leased.
    func takeIdle(_ connection: any MultiplexedConnection) -> Bool {
        state.withLock { state in
            state.entries[connection.key]?.takeIdle(connection) ?? false
        }
    }

    /// A stream of `connection` ended (called once per leased stream, on its loop): the stream is
    /// free for a waiting exchange.
    func streamEnded(on connection: any MultiplexedConnection) {
        let action = state.withLock { state -> PoolEntry.Action in
            guard !state.isShutDown else { return .none }
            return state.entries[connection.key]?.streamEnded(on: connection) ?? .none
        }
        perform(action, for: connection.key)
    }

    /// The peer changed how many concurrent streams `connection` takes (its SETTINGS).
    func streamLimitChanged(of connection: any MultiplexedConnection, to limit: Int) {
        let action = state.withLock { state -> PoolEntry.Action in
            guard !state.isShutDown else { return .none }
            return state.entries[connection.key]?.streamLimitChanged(of: connection, to: limit) ?? .none
        }
        perform(action, for: connection.key)
    }

    /// `connection` received GOAWAY: it takes no new streams and closes once drained; waiters get
    /// a new connection.
    func connectionIsGoingAway(_ connection: any MultiplexedConnection) {
        let now = clock.now
        logger.debug("connection going away", metadata: ["connection": "\(connection.id)", "origin": "\(connection.key.authority)"])
        let action = state.withLock { state -> PoolEntry.Action in
            guard !state.isShutDown else { return .none }
            return state.entries[connection.key]?.goingAway(connection, limit: maximumConnectionsPerKey, now: now) ?? .none
        }
        perform(action, for: connection.key)
    }

    private func openDedicatedConnection(for exchange: EngineExchange) {
        let id = state.withLock { state -> Int? in
            guard !state.isShutDown else { return nil }
            state.nextConnectionID += 1
            return state.nextConnectionID
        }
        guard let id else {
            exchange.finish(error: exchange.failure(.cancelled))
            return
        }
        // No wait bound: the exchange is in no queue, and the connect timeout bounds the opening.
        let attempt = factory.connect(key: exchange.key, tlsPolicy: exchange.request.tlsPolicy, id: id, pool: self,
                                      eventLoop: anyEventLoop, isDedicated: true)
        track(attempt, id: id)
        attempt.connection.whenComplete { result in
            switch result {
            case let .success(connection):
                let counts = self.state.withLock { state -> ConnectionCounts? in
                    guard !state.isShutDown else { return nil }
                    state.connections[connection.id] = connection
                    state.counts.open += 1
                    state.counts.opened += 1
                    return state.counts
                }
                guard let counts else {
                    connection.channel.close(promise: nil)
                    self.attemptEnded(id: id, closed: connection.channel.closeFuture)
                    exchange.finish(error: exchange.failure(.cancelled))
                    return
                }
                self.attemptEnded(id: id, closed: nil)
                self.report(counts)
                connection.channel.closeFuture.whenComplete { _ in self.connectionDidClose(connection) }
                connection.run(exchange)
            case let .failure(error):
                self.attemptEnded(id: id, closed: nil)
                exchange.finish(error: ConnectionFactory.urlError(for: error, url: exchange.request.url, key: exchange.key))
            }
        }
    }

    // MARK: Counts and shutdown

    var counts: ConnectionCounts {
        state.withLock { $0.counts }
    }

    /// The keys the pool keeps an entry for (tests check that idle ones are dropped).
    var entryCount: Int {
        state.withLock { $0.entries.count }
    }

    func observeCounts(_ observer: @escaping @Sendable (ConnectionCounts) -> Void) {
        countsObservers.withLock { $0.append(observer) }
    }

    private func report(_ counts: ConnectionCounts) {
        for observer in countsObservers.withLock({ $0 }) { observer(counts) }
    }

    /// Fails waiting exchanges, gives up connects under way, cancels running exchanges and closes
    /// every connection; `completion` runs once they are all closed and every connect has ended.
    /// No connection opens after it, dedicated ones included.
    func shutdown(completion: @escaping @Sendable () -> Void) {
        enum Step {
            case start(waiters: [EngineExchange], connections: [any PooledConnection], attempts: [@Sendable () -> Void])
            case wait
            case done
        }
        let step = state.withLock { state -> Step in
            if state.isShutDown {
                guard state.shutdownPending > 0 else { return .done }
                state.shutdownCompletions.append(completion)
                return .wait
            }
            state.isShutDown = true
            let waiters = state.entries.keys.flatMap { state.entries[$0]?.removeAllWaiters() ?? [] }
            state.entries = [:]
            let connections = Array(state.connections.values)
            let attempts = Array(state.attempts.values)
            state.attemptsEndingForShutdown = Set(state.attempts.keys)
            state.attempts = [:]
            // One more than there is to wait for, taken off below once everything has started.
            state.shutdownPending = connections.count + attempts.count + 1
            state.shutdownCompletions = [completion]
            return .start(waiters: waiters, connections: connections, attempts: attempts)
        }
        switch step {
        case .done:
            completion()
        case .wait:
            break
        case let .start(waiters, connections, attempts):
            for exchange in waiters { exchange.finish(error: exchange.failure(.cancelled)) }
            for abort in attempts { abort() }
            for connection in connections {
                connection.channel.eventLoop.flatSubmit {
                    connection.cancelRunningExchanges()
                    return connection.channel.close().recover { _ in }
                }.whenComplete { _ in
                    let completions = self.state.withLock { $0.shutdownStepDone() }
                    for completion in completions { completion() }
                }
            }
            let completions = state.withLock { $0.shutdownStepDone() }
            for completion in completions { completion() }
        }
    }
}

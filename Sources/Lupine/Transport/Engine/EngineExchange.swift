import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import Synchronization

/// One exchange of the engine, as Session sees it: the `TransportTask` handle, and the only place
/// that guarantees exactly one `transportDidComplete`.
///
/// The exchange first waits in its pool (for an idle connection, a new one or an HTTP/2 stream),
/// then runs in the `ExchangeHandler` of a connection or stream. Where it is, and the read demand
/// its consumer asks for, sit behind one lock, because `cancel`, `pauseReading` and
/// `resumeReading` may come from any thread. Everything else, the paused flag that delivery
/// obeys included, is confined to the connection's event loop: those three calls take the lock
/// once and reach the handler with one hop (or at once, on its event loop), and no lock is taken
/// for each part delivered.
final class EngineExchange: TransportTask {
    /// Where the exchange is.
    enum Phase {
        /// Not yet handed to the pool.
        case created
        /// Waiting for a connection until the deadline, when the pool has set one (its wait
        /// sweep ends the exchange then).
        case waiting(NIODeadline?)
        /// Running in a handler on its event loop.
        case running(NIOLoopBound<ExchangeHandler>)
        /// The server switched protocols: the handler let go of the exchange, and its upgrade
        /// reports the end. Read demand and cancel are the upgrade's business now (a WebSocket
        /// connection still passes its calls on): they reach no handler.
        case handedOver
        /// Completed.
        case ended
    }

    struct State {
        var phase = Phase.created
        /// The read demand the consumer asked for last: true after `pauseReading()`, false after
        /// `resumeReading()`. It outlives the phases: an exchange attached to a handler, first or
        /// after a retry, starts paused when it is true.
        var wantsReadingPaused = false
        /// Times the exchange went back to its pool to be sent again.
        var retries = 0
        /// `cancel()` came before the exchange reached its pool.
        var cancelledBeforeStart = false
    }

    let request: TransportRequest
    let events: any TransportEvents
    let key: ConnectionKey
    /// False when the exchange must run on a connection of its own (see `ConnectionKey.make`).
    let shareable: Bool
    /// The protocol the exchange asks to switch to (a WebSocket opening handshake), if any.
    let upgrade: (any ProtocolUpgrade)?
    private let state = Mutex(State())

    /// The pool the exchange waits in and returns to for a retry.
    let pool: ConnectionPool

    init(request: TransportRequest, events: any TransportEvents, key: ConnectionKey, shareable: Bool, pool: ConnectionPool,
         upgrade: (any ProtocolUpgrade)? = nil) {
        self.pool = pool
        self.request = request
        self.events = events
        self.key = key
        self.shareable = shareable
        self.upgrade = upgrade
    }

    // MARK: TransportTask

    func cancel() {
        enum Action { case none, leavePool, handler(NIOLoopBound<ExchangeHandler>) }
        let action = state.withLock { state -> Action in
            switch state.phase {
            case .created:
                state.cancelledBeforeStart = true
                return .none
            case .waiting:
                state.phase = .ended
                return .leavePool
            case let .running(handler):
                return .handler(handler)
            case .handedOver, .ended:
                return .none
            }
        }
        switch action {
        case .none:
            break
        case .leavePool:
            pool.removeWaiter(self)
            finish(error: failure(.cancelled))
        case let .handler(handler):
            // From an event callback (a body over its size limit), at once: parts already read
            // must not keep arriving after the consumer gave up.
            if handler.eventLoop.inEventLoop {
                handler.value.cancel(self)
            } else {
                handler.eventLoop.execute { handler.value.cancel(self) }
            }
        }
    }

    /// Stops delivery and socket reads until `resumeReading()`. From an event callback (on the
    /// exchange's event loop) it takes effect at once: no part is delivered after it. From
    /// another thread it takes effect when its one hop to the event loop runs.
    func pauseReading() {
        askForReading(paused: true)
    }

    /// Delivery and socket reads go on: parts held meanwhile are delivered first. At once on the
    /// exchange's event loop, otherwise with one hop to it.
    func resumeReading() {
        askForReading(paused: false)
    }

    /// Records the read demand and brings the handler in line with it.
    ///
    /// No count of pauses, and no order between calls to keep: each call records the state asked
    /// for in `wantsReadingPaused`, under the lock, then the handler applies whatever the
    /// latest recorded state is, at once on the event loop or in the one hop this call makes.
    /// Hops of calls made on different threads may run in any order relative to each other and
    /// to calls made on the event loop, yet each applies the state recorded last when it runs,
    /// and the hop (or inline application) of the last call runs after that call recorded its
    /// state: the handler always ends in the state asked for last, never stuck paused or running.
    /// An exchange not running on a handler (waiting in its pool, or going back to it for a
    /// retry) only records it; the handler reads it when the exchange attaches.
    private func askForReading(paused: Bool) {
        let handler = state.withLock { state -> NIOLoopBound<ExchangeHandler>? in
            state.wantsReadingPaused = paused
            if case let .running(handler) = state.phase { return handler }
            return nil
        }
        guard let handler else { return }
        if handler.eventLoop.inEventLoop {
            handler.value.applyReadDemand(of: self)
        } else {
            handler.eventLoop.execute { handler.value.applyReadDemand(of: self) }
        }
    }

    /// The read demand the consumer asked for last (see `askForReading(paused:)`), read by the
    /// handler when it applies it.
    var wantsReadingPaused: Bool {
        state.withLock { $0.wantsReadingPaused }
    }

    // MARK: For the pool and the handler

    /// Enters the pool's queue; false when it was cancelled before.
    func beginWaiting() -> Bool {
        state.withLock { state in
            guard !state.cancelledBeforeStart, case .created = state.phase else { return false }
            state.phase = .waiting(nil)
            return true
        }
    }

    /// Bounds the wait for a connection: the pool's wait sweep ends the exchange at `deadline`.
    func setWaitDeadline(_ deadline: NIODeadline) {
        state.withLock { state in
            guard case .waiting = state.phase else { return }
            state.phase = .waiting(deadline)
        }
    }

    /// When the wait for a connection ends; nil when the exchange is not waiting or has no bound.
    var waitDeadline: NIODeadline? {
        state.withLock { state in
            guard case let .waiting(deadline) = state.phase else { return nil }
            return deadline
        }
    }

    /// Binds the exchange to the handler that runs it, and tells whether its consumer has paused
    /// reading (the handler starts it so; later changes reach the handler through
    /// `applyReadDemand(of:)`). Nil when it ended meanwhile (cancelled or timed out while
    /// waiting), in which case the connection stays free.
    func attach(to handler: NIOLoopBound<ExchangeHandler>) -> Bool? {
        state.withLock { state in
            switch state.phase {
            case .waiting, .created:
                state.phase = .running(handler)
                return state.wantsReadingPaused
            case .running, .handedOver, .ended:
                return nil
            }
        }
    }

    /// The connection switched protocols: the handler no longer runs the exchange.
    func handOver() {
        state.withLock { state in
            guard case .running = state.phase else { return }
            state.phase = .handedOver
        }
    }

    /// Requests the server refused unprocessed are sent again up to this many times.
    static let unprocessedRetryLimit = 3

    /// Goes back to waiting for a connection after its reused connection died before any byte of
    /// the response, or before the exchange could start on it (the pool chose it while it was
    /// closing), once; or, `unprocessed`, after its server refused it without processing it (an
    /// HTTP/2 stream refused by GOAWAY or REFUSED_STREAM), up to `unprocessedRetryLimit` times.
    /// False when it may not go again (or ended meanwhile).
    func prepareRetry(unprocessed: Bool = false) -> Bool {
        state.withLock { state in
            guard state.retries < (unprocessed ? Self.unprocessedRetryLimit : 1) else { return false }
            switch state.phase {
            case .running, .waiting: break
            case .created, .handedOver, .ended: return false
            }
            state.retries += 1
            // The pool sets the new wait's deadline.
            // The read demand stays: the next handler starts with it.
            state.phase = .waiting(nil)
            return true
        }
    }

    /// Whether the request can be sent again from the start.
    var bodyIsReplayable: Bool {
        switch request.body {
        case nil, .data?, .file?: true
        case .stream?: false
        }
    }

    /// Reports the end of the exchange, once; later calls do nothing.
    func finish(error: URLError?) {
        state.withLock { $0.phase = .ended }
        guard !reported.exchange(true, ordering: .acquiringAndReleasing) else { return }
        events.transportDidComplete(self, error: error)
    }

    private let reported = Atomic<Bool>(false)

    /// A URLError with `code` for this exchange, described in Lupine's words with the host and port.
    func failure(_ code: URLError.Code, _ description: String? = nil) -> URLError {
        URLError(code, userInfo: [
            NSURLErrorFailingURLErrorKey: request.url,
            NSLocalizedDescriptionKey: description ?? EngineErrors.description(of: code, authority: key.authority),
        ])
    }
}

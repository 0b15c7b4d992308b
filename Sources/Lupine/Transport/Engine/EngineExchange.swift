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
/// then runs in the `ExchangeHandler` of a connection or stream. Its state sits behind one lock
/// because `cancel`, `pauseReading` and `resumeReading` may come from any thread; everything else
/// happens on the connection's event loop.
final class EngineExchange: TransportTask {
    /// Where the exchange is.
    enum Phase {
        /// Not yet handed to the pool.
        case created
        /// Waiting for a connection; the timer bounds the wait.
        case waiting(Scheduled<Void>?)
        /// Running in a handler on its event loop.
        case running(NIOLoopBound<ExchangeHandler>)
        /// Completed.
        case ended
    }

    struct State {
        var phase = Phase.created
        /// Pauses not yet answered by a resume: reading is paused while positive. The consumer
        /// alternates pause and resume, so this is 0 or 1; a count keeps it right even if a resume
        /// from another thread overtakes the pause it answers.
        var pauses = 0
        /// The handler holds parts or a socket read back because of a pause: a resume must wake it.
        var stalled = false
        /// Already sent once on a reused connection that died: not retried again.
        var retried = false
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
        enum Action { case none, leavePool(Scheduled<Void>?), handler(NIOLoopBound<ExchangeHandler>) }
        let action = state.withLock { state -> Action in
            switch state.phase {
            case .created:
                state.cancelledBeforeStart = true
                return .none
            case let .waiting(timer):
                state.phase = .ended
                return .leavePool(timer)
            case let .running(handler):
                return .handler(handler)
            case .ended:
                return .none
            }
        }
        switch action {
        case .none:
            break
        case let .leavePool(timer):
            timer?.cancel()
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

    /// Stops delivery and socket reads until the matching `resumeReading()`. From an event
    /// callback it takes effect before the next event: the handler checks it before each one.
    func pauseReading() {
        state.withLock { $0.pauses += 1 }
    }

    func resumeReading() {
        let wake = state.withLock { state -> NIOLoopBound<ExchangeHandler>? in
            state.pauses -= 1
            guard state.pauses <= 0, state.stalled, case let .running(handler) = state.phase else { return nil }
            state.stalled = false
            return handler
        }
        guard let wake else { return }
        wake.eventLoop.execute { wake.value.resumeDelivery(of: self) }
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

    /// Arms the timer bounding the wait for a connection; it is cancelled when the exchange starts.
    func setWaitTimer(_ timer: Scheduled<Void>) {
        let keep = state.withLock { state -> Bool in
            guard case .waiting = state.phase else { return false }
            state.phase = .waiting(timer)
            return true
        }
        if !keep { timer.cancel() }
    }

    /// Binds the exchange to the handler that runs it; false when it ended meanwhile (cancelled
    /// or timed out while waiting), in which case the connection stays free.
    func attach(to handler: NIOLoopBound<ExchangeHandler>) -> Bool {
        let timer = state.withLock { state -> Scheduled<Void>?? in
            switch state.phase {
            case let .waiting(timer):
                state.phase = .running(handler)
                return .some(timer)
            case .created:
                state.phase = .running(handler)
                return .some(nil)
            case .running, .ended:
                return .none
            }
        }
        guard case let .some(waitTimer) = timer else { return false }
        waitTimer?.cancel()
        return true
    }

    /// Whether delivery must stop now; when it must, a later resume wakes the handler.
    func holdsDelivery() -> Bool {
        state.withLock { state in
            guard state.pauses > 0 else { return false }
            state.stalled = true
            return true
        }
    }

    /// Whether reading is paused, without asking for a wake-up.
    var isPaused: Bool {
        state.withLock { $0.pauses > 0 }
    }

    /// Goes back to waiting for a connection after its reused connection died before any byte of
    /// the response, or before the exchange could start on it (the pool chose it while it was
    /// closing); false when it was retried before (or ended meanwhile).
    func prepareRetry() -> Bool {
        let (retries, waitTimer) = state.withLock { state -> (Bool, Scheduled<Void>?) in
            guard !state.retried else { return (false, nil) }
            let waitTimer: Scheduled<Void>?
            switch state.phase {
            case .running: waitTimer = nil
            case let .waiting(timer): waitTimer = timer
            case .created, .ended: return (false, nil)
            }
            state.retried = true
            state.phase = .waiting(nil)
            state.stalled = false
            return (true, waitTimer)
        }
        // The pool arms a new one for the new wait.
        waitTimer?.cancel()
        return retries
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
        let waitTimer = state.withLock { state -> Scheduled<Void>? in
            defer { state.phase = .ended }
            guard case let .waiting(timer) = state.phase else { return nil }
            return timer
        }
        // Ended while waiting (its connection failed, the pool shut down): the wait timer holds the
        // exchange, and through it the request, until it fires; it goes now.
        waitTimer?.cancel()
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

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers
import NIOCore

/// One exchange on Lupine's own TLS connections (see `TLSConnectionPool`): the `TransportTask`
/// handed to Session. Its work runs in the connection's `TLSConnectionHandler`; this object only
/// hops cancel, pause and resume calls onto the connection's event loop and guarantees exactly one
/// `transportDidComplete`.
final class TLSExchange: TransportTask {
    private struct State {
        var connection: TLSConnection?
        var isCancelled = false
        var isCompleted = false
        /// What the consumer asks for now; the handler follows it.
        var wantsPause = false
    }

    let request: TransportRequest
    let events: any TransportEvents
    private let state = NIOLockedValueBox(State())

    init(request: TransportRequest, events: any TransportEvents) {
        self.request = request
        self.events = events
    }

    /// Binds the exchange to `connection`; false when it was cancelled or completed meanwhile.
    func attach(to connection: TLSConnection) -> Bool {
        state.withLockedValue { state in
            guard !state.isCancelled, !state.isCompleted else { return false }
            state.connection = connection
            return true
        }
    }

    func cancel() {
        let connection = state.withLockedValue { state -> TLSConnection? in
            state.isCancelled = true
            return state.connection
        }
        guard let connection else {
            complete(error: failure(.cancelled))
            return
        }
        connection.eventLoop.execute { connection.handler.value.fail(self, with: self.failure(.cancelled)) }
    }

    /// Whether the consumer wants reading paused now.
    var wantsPause: Bool { state.withLockedValue { $0.wantsPause } }

    func pauseReading() {
        let connection = state.withLockedValue { state -> TLSConnection? in
            state.wantsPause = true
            return state.connection
        }
        // Not on a connection yet: `TLSConnectionHandler.start` reads `wantsPause`.
        guard let connection else { return }
        // From an event callback (on the loop) at once, so that the next event is held back.
        if connection.eventLoop.inEventLoop {
            connection.handler.value.applyReadDemand(self)
        } else {
            connection.eventLoop.execute { connection.handler.value.applyReadDemand(self) }
        }
    }

    func resumeReading() {
        let connection = state.withLockedValue { state -> TLSConnection? in
            state.wantsPause = false
            return state.connection
        }
        guard let connection else { return }
        // Always hopped: held parts are delivered from the loop, never from inside the caller.
        connection.eventLoop.execute { connection.handler.value.applyReadDemand(self) }
    }

    /// Reports the end of the exchange, once; later calls do nothing.
    func complete(error: URLError?) {
        let isFirst = state.withLockedValue { state -> Bool in
            defer {
                state.isCompleted = true
                state.connection = nil
            }
            return !state.isCompleted
        }
        if isFirst { events.transportDidComplete(self, error: error) }
    }

    /// A URLError with `code` for this exchange's URL.
    func failure(_ code: URLError.Code) -> URLError {
        URLError(code, userInfo: [
            NSURLErrorFailingURLErrorKey: request.url,
            NSLocalizedDescriptionKey: TransportErrorMapping.description(of: code),
        ])
    }
}

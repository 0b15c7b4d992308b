import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOWebSocket

/// One WebSocket connection: its opening handshake is an exchange of the `ConnectionEngine`, and
/// after the 101 the connection carries frames.
///
/// For the request pipeline it is the `TransportTask` of one exchange: the opening handshake is
/// reported to the exchange's `TransportEvents` like any HTTP exchange (request sent, response
/// head, body of a refusal, completion), so redirects, 401 challenges, retries, proxies, trust
/// evaluation, timeouts and the error mapping work as for every request. Once the server has
/// switched protocols, messages, pongs and the close handshake go to the
/// `WebSocketConnectionDelegate`; the exchange completes when the connection closes: with no
/// error after a close handshake, with `URLError(.networkConnectionLost)` when the connection ends
/// without one.
///
/// Its read demand is the request's: while the request's `ReadDemand` has it paused (the
/// consumer is behind on messages, or the request is suspended), the frame handler holds socket
/// reads back, so a server that floods messages meets TCP flow control instead of filling memory.
final class WebSocketConnection: TransportTask, ProtocolUpgrade {
    /// The settings of the socket, from `WebSocketRequest.Configuration`.
    struct Settings: Sendable {
        var maximumMessageSize: Int
        var pingInterval: TimeInterval?
        /// How long a close frame we sent waits for the server's before the connection is closed.
        var closeTimeout: TimeInterval = 5
    }

    private struct State {
        /// The engine's exchange of the opening handshake.
        var handshakeTask: (any TransportTask)?
        var frameHandler: NIOLoopBound<WebSocketFrameHandler>?
        /// `cancel()` was called; a connection switching protocols right then closes once switched.
        var isCancelled = false
        /// Set by `prepareClose`: `cancel()` then performs a close handshake with this payload.
        var closeRequest: WebSocketClosePayload?
        /// The first failure seen; it wins over the way the connection ended.
        var failure: URLError?
        var isComplete = false
        /// Pauses of frames and socket reads, and whether the frame handler stopped for them.
        var pauses = DeliveryPauses()
    }

    let request: TransportRequest
    let settings: Settings
    /// "host:port" of the server, for descriptions.
    let authority: String
    private let events: any TransportEvents
    private let delegate: any WebSocketConnectionDelegate
    private let handshake = WebSocketHandshake()
    private let state = NIOLockedValueBox(State())

    init(request: TransportRequest, settings: Settings, events: any TransportEvents, delegate: any WebSocketConnectionDelegate) {
        self.request = request
        self.settings = settings
        self.events = events
        self.delegate = delegate
        authority = ConnectionKey.make(for: request)?.key.authority ?? (request.url.host ?? "")
    }

    /// Sends the opening handshake through `engine`.
    func start(on engine: ConnectionEngine) {
        let task = engine.execute(request, upgrade: self, events: EventRelay(connection: self))
        let cancelled = state.withLockedValue { state -> Bool in
            state.handshakeTask = task
            return state.isCancelled && state.frameHandler == nil
        }
        if cancelled { task.cancel() }
    }

    /// The engine a WebSocket request uses when its Session runs on another transport (a test
    /// double): the upgrade needs a connection of its own.
    static let standaloneEngine = ConnectionEngine()

    // MARK: ProtocolUpgrade (on the event loop)

    func prepare(_ headers: inout NIOHTTP1.HTTPHeaders) {
        handshake.prepare(&headers)
    }

    func rejection(of head: HTTPResponseHead) -> String? {
        handshake.rejection(of: head, authority: authority)
    }

    func install(on channel: any Channel) throws {
        // Control frames carry up to 125 bytes, so the frame limit never goes below that; the
        // message limit itself is enforced on every fragment by the message assembler.
        let maxFrameSize = min(max(settings.maximumMessageSize, 125), Int(UInt32.max))
        let frameHandler = WebSocketFrameHandler(connection: self, settings: settings)
        try channel.pipeline.syncOperations.addHandlers([
            WebSocketFrameEncoder(),
            ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: maxFrameSize)),
            frameHandler,
        ])
        let bound = NIOLoopBound(frameHandler, eventLoop: channel.eventLoop)
        state.withLockedValue { $0.frameHandler = bound }
    }

    func didSwitch(head: HTTPResponseHead) {
        delegate.connectionDidOpen(self, protocol: head.headers.first(name: "Sec-WebSocket-Protocol"))
        // A cancel that came while the connection was switching did not reach the handshake.
        let (cancelled, frameHandler, closeRequest) = state.withLockedValue { ($0.isCancelled, $0.frameHandler, $0.closeRequest) }
        if cancelled, let frameHandler { end(frameHandler, sending: closeRequest) }
    }

    func engineWillClose() {
        record(failure(.cancelled))
    }

    // MARK: Reports from the frame handler (on the event loop)

    func didReceive(message: URLSessionWebSocketTask.Message) {
        delegate.connection(self, didReceive: message)
    }

    func didClose(with payload: WebSocketClosePayload) {
        delegate.connection(self, didCloseWith: payload.closeCode, reason: payload.reason)
    }

    /// Records why the connection is failing; the first failure wins.
    func record(_ error: URLError) {
        state.withLockedValue { state in
            if state.failure == nil { state.failure = error }
        }
    }

    /// Records a failure of the network.
    func record(_ error: any Error) {
        record(EngineErrors.urlError(for: error, url: request.url, authority: authority))
    }

    /// The exchange is over; reported once, with the first recorded failure if there was one.
    func complete(error: URLError?) {
        let finalError = state.withLockedValue { state -> URLError?? in
            guard !state.isComplete else { return .none }
            state.isComplete = true
            state.frameHandler = nil
            state.handshakeTask = nil
            return .some(state.failure ?? error)
        }
        guard case let .some(error) = finalError else { return }
        events.transportDidComplete(self, error: error)
    }

    /// A URLError with the failing URL and a description naming the server.
    func failure(_ code: URLError.Code, _ description: String? = nil) -> URLError {
        URLError(code, userInfo: [
            NSURLErrorFailingURLErrorKey: request.url,
            NSLocalizedDescriptionKey: description ?? EngineErrors.description(of: code, authority: authority),
        ])
    }

    // MARK: Commands (from any thread)

    /// Makes the next `cancel()` close with a close handshake sending `payload`.
    func prepareClose(_ payload: WebSocketClosePayload) {
        state.withLockedValue { $0.closeRequest = payload }
    }

    /// Closes the connection: with a close handshake after `prepareClose`, abruptly otherwise.
    /// Before the server switched protocols, the handshake's exchange is cancelled.
    func cancel() {
        let (handshakeTask, frameHandler, closeRequest) = state.withLockedValue { state in
            state.isCancelled = true
            if state.failure == nil { state.failure = failure(.cancelled) }
            return (state.handshakeTask, state.frameHandler, state.closeRequest)
        }
        if let frameHandler {
            end(frameHandler, sending: closeRequest)
        } else {
            handshakeTask?.cancel()
        }
    }

    private func end(_ frameHandler: NIOLoopBound<WebSocketFrameHandler>, sending closeRequest: WebSocketClosePayload?) {
        frameHandler.eventLoop.execute {
            if let closeRequest {
                frameHandler.value.close(sending: closeRequest)
            } else {
                frameHandler.value.abort()
            }
        }
    }

    /// Stops taking frames until the matching `resumeReading()`: before the server switched
    /// protocols this applies to the opening handshake's exchange (a refusal's body), after it to
    /// the frame handler, which holds frames and socket reads. From the event loop (a message
    /// that put the consumer over its bound) it takes effect before the next frame.
    func pauseReading() {
        let handshakeTask = state.withLockedValue { state in
            state.pauses.pause()
            return state.handshakeTask
        }
        handshakeTask?.pauseReading()
    }

    func resumeReading() {
        let (handshakeTask, stalledHandler) = state.withLockedValue { state in
            let wakes = state.pauses.resume(canWake: state.frameHandler != nil)
            return (state.handshakeTask, wakes ? state.frameHandler : nil)
        }
        handshakeTask?.resumeReading()
        guard let stalledHandler else { return }
        stalledHandler.eventLoop.execute { stalledHandler.value.resumeDelivery() }
    }

    /// Whether frames must wait now (on the event loop); when they must, the next resume wakes
    /// the frame handler.
    func holdsDelivery() -> Bool {
        state.withLockedValue { $0.pauses.holdsDelivery() }
    }

    /// Whether reading is paused, without asking for a wake-up.
    var isReadingPaused: Bool {
        state.withLockedValue { $0.pauses.isPaused }
    }

    /// Sends `message`; `completion` runs on the event loop.
    func send(_ message: URLSessionWebSocketTask.Message, completion: @escaping @Sendable (Result<Void, URLError>) -> Void) {
        guard let frameHandler = state.withLockedValue({ $0.frameHandler }) else {
            completion(.failure(failure(.networkConnectionLost, "The WebSocket connection to \(authority) is not open.")))
            return
        }
        frameHandler.eventLoop.execute { frameHandler.value.send(message, completion: completion) }
    }

    /// Sends a ping; `completion` runs on the event loop when its pong arrives, or with the error
    /// that ended the connection first. Returns false when the connection is not open.
    func sendPing(completion: @escaping @Sendable (Result<Void, URLError>) -> Void) -> Bool {
        guard let frameHandler = state.withLockedValue({ $0.frameHandler }) else { return false }
        frameHandler.eventLoop.execute { frameHandler.value.sendPing(completion: completion) }
        return true
    }

    // MARK: Events of the handshake's exchange

    /// Passes the engine's events on with the connection as their task, so that the request's
    /// read demand and bookkeeping see one task for the whole life of the socket.
    fileprivate final class EventRelay: TransportEvents {
        let connection: WebSocketConnection

        init(connection: WebSocketConnection) {
            self.connection = connection
        }
    }
}

extension WebSocketConnection.EventRelay {
    func transportDidSendBodyBytes(_ task: any TransportTask, totalBytesSent: Int64, totalBytesExpectedToSend: Int64?) {
        connection.events.transportDidSendBodyBytes(connection, totalBytesSent: totalBytesSent,
                                                    totalBytesExpectedToSend: totalBytesExpectedToSend)
    }

    func transportDidSendRequest(_ task: any TransportTask) {
        connection.events.transportDidSendRequest(connection)
    }

    func transportDidReceive(_ task: any TransportTask, head: TransportResponseHead) {
        connection.events.transportDidReceive(connection, head: head)
    }

    func transportDidReceive(_ task: any TransportTask, bodyPart: Data) {
        connection.events.transportDidReceive(connection, bodyPart: bodyPart)
    }

    func transportDidComplete(_ task: any TransportTask, error: URLError?) {
        connection.complete(error: error)
    }
}

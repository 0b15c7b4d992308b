import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers

/// A WebSocket connection (RFC 6455) as a request: made by `Session.webSocketRequest(...)`, it
/// goes through the pipeline of every request (URLRequest creation, interceptors, redirects,
/// authentication challenges, retries, event monitors), then stays open until either side closes.
///
/// `ws` and `wss` URLs are accepted (`http` and `https` too). The opening handshake's response is
/// the request's `response`: a 101 on success. Any other answer fails the request with
/// `AFError.responseValidationFailed(reason: .unacceptableStatusCode(code:))` (retriers see it
/// like any response), and a 101 that does not prove the upgrade with `AFError.sessionTaskFailed(
/// error: URLError(.badServerResponse))`. Transport failures are `AFError.sessionTaskFailed` with
/// the `URLError` URLSession reports for them.
///
/// Messages arrive through the stream handlers (`streamMessageEvents(on:handler:)` and the others)
/// and `webSocketTask()`; fragmented messages are reassembled. Incoming messages are read as the
/// consumer takes them: a message is taken once a closure handler has returned from it, or once an
/// async stream's iteration has taken it (or its buffering policy dropped it). When more than
/// about 1 MiB or 64 messages (counted once per handler) are handed out and not yet taken, the
/// request stops reading the socket, so TCP slows the server down, and it reads again once the
/// consumers have caught up. A slow consumer therefore slows the server instead of filling
/// memory, whatever the streams' buffering policy. Pings the server sends while reading is paused
/// are answered once the consumer catches up (see `WebSocketFrameHandler`). `suspend()` pauses
/// reading too.
///
/// The connection ends, and the request finishes, when:
/// - the server closes: `.disconnected` with its code, then `.completed` with no error;
/// - `close(sending:reason:)` is called: a close handshake, `.disconnected`, then `.completed`
///   with no error (as in Alamofire, a close ends the request without a failure, though
///   `isCancelled` is true);
/// - `cancel()` is called: the connection is dropped, no `.disconnected`, and the request
///   finishes with `AFError.explicitlyCancelled`;
/// - a message exceeds `Configuration.maximumMessageSize`, the server breaks the protocol, stops
///   answering pings, or the connection drops: `.completed` with the matching error.
public final class WebSocketRequest: Request, @unchecked Sendable {
    /// What the connection reports to the handlers before they serialize it.
    enum IncomingEvent: Sendable {
        case connected(protocol: String?)
        case receivedMessage(URLSessionWebSocketTask.Message)
        case disconnected(closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?)
        case completed(Completion)
    }

    typealias SendCompletion = @Sendable (Result<Void, any Error>) -> Void

    /// Hands one event to one handler; for a message, calls `taken` once the handler's consumer
    /// has taken it (other events call it too, and it does nothing for them).
    typealias EventConsumer = @Sendable (_ event: IncomingEvent, _ taken: @escaping @Sendable () -> Void) -> Void

    struct SocketState {
        /// The connection of the current attempt.
        var connection: WebSocketConnection?
        var isOpen = false
        var handlers: [(id: Int, consume: EventConsumer)] = []
        /// The messages handed to the handlers and not yet taken: reading pauses while too many
        /// are, the same bookkeeping as a `DataStreamRequest`'s chunks.
        var delivery = StreamDelivery()
        /// Messages sent before the connection opened.
        var enqueuedSends: [(message: URLSessionWebSocketTask.Message, queue: DispatchQueue, completion: SendCompletion)] = []
        /// Set by `close(sending:reason:)`.
        var closeRequest: WebSocketClosePayload?
        /// Which of `close(sending:reason:)` and `cancel()` ended the request first, if either did.
        var endedBy: Ending?
    }

    enum Ending {
        case close, cancel
    }

    /// The value the URLRequest is built from.
    public let convertible: any URLRequestConvertible
    /// The socket's settings.
    public let configuration: Configuration

    let socketState = NIOLockedValueBox(SocketState())
    /// The serial queue the async streams of `webSocketTask()` deliver on.
    let streamCompletionQueue: DispatchQueue

    init(convertible: any URLRequestConvertible, configuration: Configuration, context: RequestContext) {
        self.convertible = convertible
        self.configuration = configuration
        self.streamCompletionQueue = DispatchQueue(label: "lupine.webSocketStreamQueue-\(context.id)")
        super.init(context: context)
        onFinish { [weak self] in self?.didFinishSocket() }
    }

    // MARK: Pipeline hooks

    override var urlRequestConvertible: (any URLRequestConvertible)? { convertible }

    override var supportedURLSchemes: Set<String> { ["ws", "wss", "http", "https"] }

    /// The opening request has no body.
    override func transportBody(for urlRequest: URLRequest) throws -> TransportRequestBody? { nil }

    override func openExchange(_ transportRequest: TransportRequest, of hop: PreparedHop, on environment: any RequestEnvironment,
                               events: any TransportEvents) -> any TransportTask {
        var handshakeRequest = transportRequest
        if let subprotocol = configuration.protocol,
           !handshakeRequest.headerFields.contains(where: { $0.name.lupineEqualsIgnoringASCIICase("Sec-WebSocket-Protocol") }) {
            handshakeRequest.headerFields.append(.websocketProtocol(subprotocol))
        }
        let settings = WebSocketConnection.Settings(maximumMessageSize: configuration.maximumMessageSize,
                                                    pingInterval: configuration.pingInterval)
        let connection = WebSocketConnection(request: handshakeRequest, settings: settings, events: events, delegate: self)
        let closeRequest = socketState.withLockedValue { state in
            state.connection = connection
            state.isOpen = false
            return state.closeRequest
        }
        if let closeRequest { connection.prepareClose(closeRequest) }
        connection.start(on: defaults.webSocketEngine)
        return connection
    }

    override func didReceiveResponseHead(_ response: LazyHTTPResponse, task: any TransportTask) {
        if response.statusCode != 101 {
            error = .responseValidationFailed(reason: .unacceptableStatusCode(code: response.statusCode))
        }
    }

    override func resetForRetry() {
        socketState.withLockedValue { state in
            state.connection = nil
            state.isOpen = false
        }
    }

    /// The request finished: handlers are released (they hold the request) and messages still
    /// waiting for a connection fail.
    private func didFinishSocket() {
        let failedSends = socketState.withLockedValue { state in
            defer {
                state.enqueuedSends.removeAll()
                // Messages still on their way to a handler are taken as usual; none follow.
                for handler in state.handlers { _ = state.delivery.completionRequested(handler: handler.id) }
                state.handlers.removeAll()
                state.connection = nil
                state.isOpen = false
            }
            return state.enqueuedSends
        }
        let error = closedConnectionError
        for send in failedSends {
            send.queue.async { send.completion(.failure(error)) }
        }
    }

    private var closedConnectionError: AFError {
        error ?? .sessionTaskFailed(error: URLError(.networkConnectionLost, userInfo: [
            NSLocalizedDescriptionKey: "The WebSocket connection is closed.",
        ]))
    }

    // MARK: Closing

    /// Closes the connection with a close handshake sending `closeCode` and `reason`.
    ///
    /// The request ends without an error, as in Alamofire: `error` stays nil and the `.completed`
    /// event carries no error, while `isCancelled` becomes true. `.disconnected` reports the
    /// server's answering code, or `closeCode` when it does not answer within 5 seconds. Before
    /// the connection is open, the request ends at once, also without an error. After `cancel()`
    /// (or once the request has finished), this does nothing.
    @discardableResult
    public func close(sending closeCode: URLSessionWebSocketTask.CloseCode, reason: Data? = nil) -> Self {
        let payload = WebSocketClosePayload(sending: closeCode, reason: reason)
        let hasEnded = isCancelled || isFinished
        let (connection, closes) = socketState.withLockedValue { state in
            state.closeRequest = payload
            if state.endedBy == nil, !hasEnded { state.endedBy = .close }
            return (state.connection, state.endedBy == .close)
        }
        connection?.prepareClose(payload)
        super.cancel()
        // The cancellation's error is not a failure here: cleared before anything reads it (the
        // request finishes on its queue, after this returns).
        if closes { clearCloseCancellation() }
        return self
    }

    /// Cancels the request: the connection is dropped without a close handshake, and the request
    /// finishes with `AFError.explicitlyCancelled`.
    @discardableResult
    override public func cancel() -> Self {
        socketState.withLockedValue { state in
            if state.endedBy == nil { state.endedBy = .cancel }
        }
        return super.cancel()
    }

    /// The connection's end after a close: its `URLError.cancelled` is no failure either.
    override func transferWillComplete(error: AFError?, then next: @escaping @Sendable () -> Void) {
        if socketState.withLockedValue({ $0.endedBy == .close }) { clearCloseCancellation() }
        next()
    }

    /// Forgets the error a close leaves: the explicit cancellation, or the transport's report of it.
    private func clearCloseCancellation() {
        mutableState.withLock { state in
            switch state.machine.error {
            case .explicitlyCancelled?:
                state.machine.error = nil
            case let .sessionTaskFailed(error)? where (error as? URLError)?.code == .cancelled:
                state.machine.error = nil
            default:
                break
            }
        }
    }

    // MARK: Sending

    /// Sends `message`; `completionHandler` runs on `queue` once it is written (or failed).
    ///
    /// A message sent before the connection opens waits for it. When the request has finished or
    /// is cancelled (or finishes before the message could go out), the handler gets the request's
    /// error, or `AFError.sessionTaskFailed(error: URLError(.networkConnectionLost))`; Alamofire
    /// never calls it then.
    @preconcurrency
    public func send(_ message: URLSessionWebSocketTask.Message,
                     queue: DispatchQueue = .lupineDefault,
                     completionHandler: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        let queue = queue.resolvingLupineDefault(to: defaultQueue)
        let hasEnded = isCancelled || isFinished
        let connection = socketState.withLockedValue { state -> WebSocketConnection? in
            guard !hasEnded else { return nil }
            guard state.isOpen, let connection = state.connection else {
                state.enqueuedSends.append((message, queue, completionHandler))
                return nil
            }
            return connection
        }
        if hasEnded {
            let error = closedConnectionError
            queue.async { completionHandler(.failure(error)) }
            return
        }
        connection.map { send(message, on: $0, queue: queue, completion: completionHandler) }
    }

    private func send(_ message: URLSessionWebSocketTask.Message, on connection: WebSocketConnection,
                      queue: DispatchQueue, completion: @escaping SendCompletion) {
        connection.send(message) { result in
            let outcome = result.mapError { AFError.sessionTaskFailed(error: $0) as any Error }
            queue.async { completion(outcome) }
        }
    }

    /// Sends a ping; `onResponse` runs on `queue` with the pong, the error that ended the
    /// connection first, or `.unsent` when the connection is not open.
    @preconcurrency
    public func sendPing(respondingOn queue: DispatchQueue = .lupineDefault, onResponse: @escaping @Sendable (PingResponse) -> Void) {
        let queue = queue.resolvingLupineDefault(to: defaultQueue)
        let connection = socketState.withLockedValue { $0.isOpen ? $0.connection : nil }
        let start = Date()
        let startUptime = ProcessInfo.processInfo.systemUptime
        let sent = isResumed && connection?.sendPing { result in
            switch result {
            case .success:
                let pong = PingResponse.Pong(start: start, end: Date(), latency: ProcessInfo.processInfo.systemUptime - startUptime)
                queue.async { onResponse(.pong(pong)) }
            case let .failure(error):
                queue.async { onResponse(.error(AFError.sessionTaskFailed(error: error))) }
            }
        } == true
        if !sent { queue.async { onResponse(.unsent) } }
    }

    // MARK: Events

    /// Hands an event other than a message to every handler.
    func emit(_ event: IncomingEvent) {
        let handlers = socketState.withLockedValue { $0.handlers }
        handlers.forEach { $0.consume(event) {} }
    }

    /// A handler has taken a message of `byteCount` bytes: reading resumes once they have caught up.
    private func messageTaken(by handlerID: Int, byteCount: Int) {
        let resumesReading = socketState.withLockedValue { state in
            let resumes = state.delivery.deliveryFinished(handler: handlerID, byteCount: byteCount).resumeReading
            if resumes { readDemand.record(.streamConsumer, present: false) }
            return resumes
        }
        if resumesReading { readDemand.settle() }
    }

    /// The most message bytes and messages (counted once per handler) ever handed to the handlers
    /// and not yet taken at once; for tests of the bound.
    var messageBacklogPeak: (bytes: Int, messages: Int) {
        socketState.withLockedValue { ($0.delivery.peakPendingBytes, $0.delivery.peakPendingDeliveries) }
    }
}

extension WebSocketRequest: WebSocketConnectionDelegate {
    func connectionDidOpen(_ connection: WebSocketConnection, protocol: String?) {
        let waiting = socketState.withLockedValue { state -> [(message: URLSessionWebSocketTask.Message, queue: DispatchQueue, completion: SendCompletion)]? in
            guard state.connection === connection else { return nil }
            state.isOpen = true
            defer { state.enqueuedSends.removeAll() }
            return state.enqueuedSends
        }
        guard let waiting else { return }
        emit(.connected(protocol: `protocol`))
        for send in waiting {
            self.send(send.message, on: connection, queue: send.queue, completion: send.completion)
        }
    }

    func connection(_ connection: WebSocketConnection, didReceive message: URLSessionWebSocketTask.Message) {
        let byteCount = message.byteCount
        let (handlers, pausesReading) = socketState.withLockedValue { state in
            // Recorded in the same critical section as the decision, so that a handler catching
            // up on another thread cannot reach the demand first. The pause reaches the connection
            // before this returns: the frame handler holds the next frame.
            let pauses = state.delivery.partArrived(byteCount: byteCount)
            if pauses { readDemand.record(.streamConsumer, present: true) }
            return (state.handlers, pauses)
        }
        if pausesReading { readDemand.settle() }
        for handler in handlers {
            handler.consume(.receivedMessage(message)) { self.messageTaken(by: handler.id, byteCount: byteCount) }
        }
    }

    func connection(_ connection: WebSocketConnection, didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) {
        socketState.withLockedValue { state in
            if state.connection === connection { state.isOpen = false }
        }
        emit(.disconnected(closeCode: closeCode, reason: reason))
    }
}

extension URLSessionWebSocketTask.Message {
    /// The size of the message's payload, for the backlog's byte count.
    var byteCount: Int {
        switch self {
        case let .data(data): data.count
        case let .string(text): text.utf8.count
        @unknown default: 0
        }
    }
}

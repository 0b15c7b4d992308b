import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// One WebSocket connection, opened on SwiftNIO directly: AsyncHTTPClient, the Session's
/// transport, has no way to hand over an upgraded connection.
///
/// For the request pipeline it is the `TransportTask` of one exchange: the opening handshake is
/// reported to the exchange's `TransportEvents` like any HTTP exchange (request sent, response
/// head, body of a refusal, completion), so redirects, 401 challenges, retries and the error
/// mapping work as for every request. Once the server has switched protocols, messages, pongs
/// and the close handshake go to the `WebSocketConnectionDelegate`; the exchange completes when
/// the connection closes: with no error after a close handshake, with
/// `URLError(.networkConnectionLost)` when the connection ends without one.
final class WebSocketConnection: TransportTask {
    /// The settings of the socket, from `WebSocketRequest.Configuration`.
    struct Settings: Sendable {
        var maximumMessageSize: Int
        var pingInterval: TimeInterval?
        /// How long a close frame we sent waits for the server's before the connection is closed.
        var closeTimeout: TimeInterval = 5
    }

    private struct State {
        var channel: (any Channel)?
        var handshakeHandler: NIOLoopBound<WebSocketHandshakeHandler>?
        var frameHandler: NIOLoopBound<WebSocketFrameHandler>?
        /// `cancel()` was called; a connection still being made is closed once it exists.
        var isCancelled = false
        /// Set by `prepareClose`: `cancel()` then performs a close handshake with this payload.
        var closeRequest: WebSocketClosePayload?
        /// The first failure seen; it wins over the way the connection ended.
        var failure: URLError?
        var isComplete = false
        var isSwitchingProtocols = false
        /// What the exchange's consumer asks for now; the handshake handler follows it.
        var wantsPause = false
    }

    let request: TransportRequest
    let settings: Settings
    /// A 101 arrived; the upgrade is under way.
    var isSwitchingProtocols: Bool {
        get { state.withLockedValue { $0.isSwitchingProtocols } }
        set { state.withLockedValue { $0.isSwitchingProtocols = newValue } }
    }
    private let events: any TransportEvents
    private let delegate: any WebSocketConnectionDelegate
    private let eventLoop: any EventLoop
    private let state = NIOLockedValueBox(State())
    /// The server-trust evaluator (and client certificate) of a wss connection with a TLS policy.
    private let trustCheck: ServerTrustCheck?

    init(request: TransportRequest, settings: Settings, events: any TransportEvents, delegate: any WebSocketConnectionDelegate) {
        self.request = request
        self.trustCheck = request.tlsPolicy.map { ServerTrustCheck(evaluator: $0.evaluator, host: request.url.host ?? "") }
        self.settings = settings
        self.events = events
        self.delegate = delegate
        self.eventLoop = MultiThreadedEventLoopGroup.singleton.next()
    }

    // MARK: Opening

    /// Connects and sends the opening handshake.
    func start() {
        guard let target = WebSocketHandshakeTarget(url: request.url) else {
            complete(error: URLError(.badURL, userInfo: [NSURLErrorFailingURLErrorKey: request.url]))
            return
        }
        let tlsContext: NIOSSLContext?
        do {
            if !target.usesTLS {
                tlsContext = nil
            } else if let policy = request.tlsPolicy {
                tlsContext = try TLSClientContextCache.shared.context(for: policy.clientCredential)
            } else {
                tlsContext = try Self.sharedTLSContext.get()
            }
        } catch {
            complete(error: mappedError(error))
            return
        }
        let timeout = TimeAmount.nanoseconds(Int64(max(request.idleTimeout, 0.001) * 1_000_000_000))
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(timeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try self.configure(channel, target: target, tlsContext: tlsContext, timeout: timeout)
                }
            }
        bootstrap.connect(host: target.host, port: target.port).whenComplete { result in
            switch result {
            case let .success(channel):
                let cancelled = self.state.withLockedValue { state in
                    state.channel = channel
                    return state.isCancelled
                }
                if cancelled { channel.close(promise: nil) }
            case let .failure(error):
                self.complete(error: self.mappedError(error))
            }
        }
    }

    private func configure(_ channel: any Channel, target: WebSocketHandshakeTarget, tlsContext: NIOSSLContext?, timeout: TimeAmount) throws {
        let pipeline = channel.pipeline.syncOperations
        if let tlsContext, let trustCheck {
            // The trust decision runs during the handshake, before the upgrade request is sent
            // (see ServerTrustCheck for why this is SwiftNIO's callback).
            try pipeline.addHandler(NIOSSLClientHandler(context: tlsContext, serverHostname: target.serverNameIndication,
                                                        customVerificationCallback: trustCheck.verify))
        } else if let tlsContext {
            try pipeline.addHandler(NIOSSLClientHandler(context: tlsContext, serverHostname: target.serverNameIndication))
        }
        let handshake = WebSocketHandshakeHandler(connection: self, head: target.requestHead(for: request), timeout: timeout)
        let boundHandshake = NIOLoopBound(handshake, eventLoop: channel.eventLoop)
        // Control frames carry up to 125 bytes, so the frame limit never goes below that; the
        // message limit itself is enforced on every fragment by the message assembler.
        let maxFrameSize = min(max(settings.maximumMessageSize, 125), Int(UInt32.max))
        let upgrader = NIOWebSocketClientUpgrader(maxFrameSize: maxFrameSize, automaticErrorHandling: false) { channel, head in
            channel.eventLoop.makeCompletedFuture {
                try self.didUpgrade(channel, head: head, removing: boundHandshake.value)
            }
        }
        // What `addHTTPClientHandlers(withClientUpgrade:)` does, with the observer added.
        let encoder = HTTPRequestEncoder()
        let decoder = ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes))
        let observer = WebSocketSwitchObserver(connection: self)
        try pipeline.addHandler(encoder)
        try pipeline.addHandler(decoder)
        try pipeline.addHandler(observer)
        try pipeline.addHandler(NIOHTTPClientUpgradeHandler(upgraders: [upgrader],
                                                            httpHandlers: [encoder, decoder, observer],
                                                            upgradeCompletionHandler: { _ in }))
        try pipeline.addHandler(handshake)
        state.withLockedValue { $0.handshakeHandler = boundHandshake }
    }

    private func didUpgrade(_ channel: any Channel, head: HTTPResponseHead, removing handshake: WebSocketHandshakeHandler) throws {
        let pipeline = channel.pipeline.syncOperations
        pipeline.removeHandler(handshake, promise: nil)
        let frameHandler = WebSocketFrameHandler(connection: self, settings: settings)
        try pipeline.addHandler(frameHandler)
        let boundFrameHandler = NIOLoopBound(frameHandler, eventLoop: channel.eventLoop)
        state.withLockedValue { state in
            state.handshakeHandler = nil
            state.frameHandler = boundFrameHandler
        }
        events.transportDidReceive(self, head: Self.transportHead(head))
        delegate.connectionDidOpen(self, protocol: head.headers.first(name: "Sec-WebSocket-Protocol"))
        if !channel.isActive {
            // The connection ended during the upgrade: the frames that came with the 101 are
            // replayed to the frame handler first, then it ends the connection.
            channel.eventLoop.execute { boundFrameHandler.value.connectionDidEnd() }
        }
    }

    /// A single TLS context for every connection: building one loads the system's trust roots.
    private static let sharedTLSContext = Result { try NIOSSLContext(configuration: .makeClientConfiguration()) }

    // MARK: Reports from the channel handlers (on the event loop)

    func didSendRequest() {
        events.transportDidSendRequest(self)
    }

    func didReceive(head: HTTPResponseHead) {
        events.transportDidReceive(self, head: Self.transportHead(head))
    }

    func didReceive(bodyPart: ByteBuffer) {
        events.transportDidReceive(self, bodyPart: Data(bodyPart.readableBytesView))
    }

    /// Whether the exchange's consumer wants reading paused now.
    var wantsPause: Bool { state.withLockedValue { $0.wantsPause } }

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

    /// Records a failure of the network or the TLS layer.
    func record(_ error: any Error) {
        record(mappedError(error))
    }

    /// The URLError for a failure of the network or the TLS layer; a server the trust evaluator
    /// rejected gives `.serverCertificateUntrusted` carrying the evaluator's AFError.
    private func mappedError(_ error: any Error) -> URLError {
        trustCheck?.urlError(for: error, url: request.url) ?? TransportErrorMapping.urlError(for: error, url: request.url)
    }

    /// The exchange is over; reported once, with the first recorded failure if there was one.
    func complete(error: URLError?) {
        let finalError = state.withLockedValue { state -> URLError?? in
            guard !state.isComplete else { return .none }
            state.isComplete = true
            state.handshakeHandler = nil
            state.frameHandler = nil
            return .some(state.failure ?? error)
        }
        guard case let .some(error) = finalError else { return }
        events.transportDidComplete(self, error: error)
    }

    /// A URLError with the failing URL and a description.
    func failure(_ code: URLError.Code, _ description: String? = nil) -> URLError {
        URLError(code, userInfo: [
            NSURLErrorFailingURLErrorKey: request.url,
            NSLocalizedDescriptionKey: description ?? TransportErrorMapping.description(of: code),
        ])
    }

    // MARK: Commands (from any thread)

    /// Makes the next `cancel()` close with a close handshake sending `payload`.
    func prepareClose(_ payload: WebSocketClosePayload) {
        state.withLockedValue { $0.closeRequest = payload }
    }

    /// Closes the connection: with a close handshake after `prepareClose`, abruptly otherwise.
    func cancel() {
        let (channel, frameHandler, closeRequest) = state.withLockedValue { state in
            state.isCancelled = true
            if state.failure == nil { state.failure = failure(.cancelled) }
            return (state.channel, state.frameHandler, state.closeRequest)
        }
        if let frameHandler, let closeRequest {
            eventLoop.execute { frameHandler.value.close(sending: closeRequest) }
        } else {
            channel?.close(promise: nil)
        }
    }

    func pauseReading() {
        let handshake = state.withLockedValue { state in
            state.wantsPause = true
            return state.handshakeHandler
        }
        guard let handshake else { return }
        // From an event callback (on the loop) at once, so that the next part is held back.
        if eventLoop.inEventLoop {
            handshake.value.applyReadDemand()
        } else {
            eventLoop.execute { handshake.value.applyReadDemand() }
        }
    }

    func resumeReading() {
        let handshake = state.withLockedValue { state in
            state.wantsPause = false
            return state.handshakeHandler
        }
        guard let handshake else { return }
        // Always hopped: held parts are delivered from the loop, never from inside the caller.
        eventLoop.execute { handshake.value.applyReadDemand() }
    }

    /// Sends `message`; `completion` runs on the event loop.
    func send(_ message: URLSessionWebSocketTask.Message, completion: @escaping @Sendable (Result<Void, URLError>) -> Void) {
        guard let frameHandler = state.withLockedValue({ $0.frameHandler }) else {
            completion(.failure(failure(.networkConnectionLost, "The WebSocket connection is not open.")))
            return
        }
        eventLoop.execute { frameHandler.value.send(message, completion: completion) }
    }

    /// Sends a ping; `completion` runs on the event loop when its pong arrives, or with the error
    /// that ended the connection first. Returns false when the connection is not open.
    func sendPing(completion: @escaping @Sendable (Result<Void, URLError>) -> Void) -> Bool {
        guard let frameHandler = state.withLockedValue({ $0.frameHandler }) else { return false }
        eventLoop.execute { frameHandler.value.sendPing(completion: completion) }
        return true
    }

    private static func transportHead(_ head: HTTPResponseHead) -> TransportResponseHead {
        TransportResponseHead(statusCode: Int(head.status.code),
                              httpVersion: "HTTP/\(head.version.major).\(head.version.minor)",
                              headerFields: head.headers.map { HTTPHeader(name: $0.name, value: $0.value) })
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSOCKS
import NIOSSL

/// Opens the engine's connections: TCP to the origin or the proxy, then the proxy step, TLS with
/// the trust decision inside the handshake, and the HTTP/1.1 or HTTP/2 pipeline ALPN chose.
struct ConnectionFactory: Sendable {
    private let connectTimeout: TimeAmount
    private let clock: any EngineClock
    private let decompressionRatioLimit: Int
    private let http2PingInterval: TimeAmount?
    private let logger: Logger

    init(configuration: ConnectionEngine.Configuration) {
        connectTimeout = .lupineSeconds(configuration.connectTimeout)
        clock = configuration.clock
        decompressionRatioLimit = configuration.decompressionRatioLimit
        http2PingInterval = configuration.http2PingInterval.map { .lupineSeconds($0) }
        logger = configuration.logger
    }

    /// The buffers a connection reads into: NIO's adaptive sizes, but never below the 2 KiB every
    /// connection starts with. A body part shares its read buffer, and NIO reuses a read buffer only
    /// once no part holds it; while a caller holds parts, each read takes a new buffer of the size
    /// NIO adapted to, which a run of small reads (a drip, server-sent events) shrinks to 64 bytes.
    /// Reads that small split a small response the server wrote at once, a JSON line among them,
    /// into pieces no stream serializer can decode; URLSession hands such a body over whole.
    static let readBuffers = AdaptiveRecvByteBufferAllocator(minimum: 2048, initial: 2048, maximum: 65536)

    /// A connect under way: the connection to come, and a way to give it up.
    struct Attempt {
        let connection: EventLoopFuture<any PooledConnection>
        /// Ends the attempt (from any thread): `connection` fails with `EngineError.shutDown`
        /// unless it has already completed.
        let abort: @Sendable () -> Void
    }

    /// A connection for `key`, ready for exchanges. `tlsPolicy` is that of the exchanges of `key`
    /// (they share the evaluator and credential instances). A failure is a `SetupFailure`.
    func connect(key: ConnectionKey, tlsPolicy: TransportTLSPolicy?, id: Int, pool: ConnectionPool,
                 eventLoop: any EventLoop, isDedicated: Bool) -> Attempt {
        let connection = makeConnection(key: key, tlsPolicy: tlsPolicy, id: id, pool: pool, eventLoop: eventLoop,
                                        isDedicated: isDedicated)
        return Attempt(connection: connection.future, abort: connection.abort)
    }

    private func makeConnection(key: ConnectionKey, tlsPolicy: TransportTLSPolicy?, id: Int, pool: ConnectionPool,
                                eventLoop: any EventLoop, isDedicated: Bool)
        -> (future: EventLoopFuture<any PooledConnection>, abort: @Sendable () -> Void) {
        // Every TLS handshake is judged by an evaluator: the policy's, else default validation
        // against the system's roots. One path, whatever the policy.
        let trustCheck = key.usesTLS ? ServerTrustCheck(evaluator: tlsPolicy?.evaluator, host: key.host) : nil
        let makeTLSHandler: (@Sendable () throws -> NIOSSLClientHandler)?
        if key.usesTLS {
            let sni = key.hostIsIPAddress ? nil : key.host
            let context: NIOSSLContext
            do {
                context = try TLSContexts.shared.context(credential: tlsPolicy?.clientCredential, offersHTTP2: !key.http1Only)
            } catch {
                return (eventLoop.makeFailedFuture(SetupFailure(error: error, trustCheck: nil)), {})
            }
            let verify = trustCheck.map { $0.verify }
            makeTLSHandler = {
                guard let verify else { return try NIOSSLClientHandler(context: context, serverHostname: sni) }
                return try NIOSSLClientHandler(context: context, serverHostname: sni, customVerificationCallback: verify)
            }
        } else {
            makeTLSHandler = nil
        }
        let negotiated = eventLoop.makePromise(of: ConnectionSetupHandler.Negotiated.self)
        let setup = ConnectionSetupHandler(promise: negotiated, clock: clock, timeout: connectTimeout,
                                           awaitsProxy: key.proxy?.kind == .socks || key.tunnelsThroughProxy,
                                           makeTLSHandler: makeTLSHandler)
        // Made here, off its event loop, and used only on it from now on.
        let boundSetup = UncheckedSendableSetup(value: setup)
        let (host, port) = key.proxy.map { ($0.host, $0.port) } ?? (key.host, key.port)
        let bootstrap = ClientBootstrap(group: eventLoop)
            // A backstop only: the setup handler enforces the connect deadline on the engine's clock.
            .connectTimeout(connectTimeout + .seconds(1))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelOption(.recvAllocator, value: Self.readBuffers)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let proxy = key.proxy, proxy.kind == .socks {
                        try pipeline.addHandler(SOCKSClientHandler(targetAddress: Self.socksAddress(for: key)))
                    } else if key.tunnelsThroughProxy {
                        try pipeline.addHandler(HTTPConnectTunnelHandler(target: key.authority,
                                                                         authorization: key.proxy?.authorization))
                    }
                    try pipeline.addHandler(boundSetup.value)
                }
            }
        // An address literal needs no resolver: NIO's runs getaddrinfo on a Dispatch queue, which a
        // busy process may serve late.
        let connected: EventLoopFuture<any Channel>
        if let address = try? SocketAddress(ipAddress: host, port: port) {
            connected = bootstrap.connect(to: address)
        } else {
            connected = bootstrap.connect(host: host, port: port)
        }
        connected.whenFailure { error in boundSetup.value.connectFailed(error) }
        let (clock, ratio, logger, pingInterval) = (clock, decompressionRatioLimit, logger, http2PingInterval)
        let abort: @Sendable () -> Void = { eventLoop.execute { boundSetup.value.abort() } }
        let future = negotiated.futureResult
            .flatMap { negotiated in
                connected.flatMapThrowing { channel -> any PooledConnection in
                    let pipeline = channel.pipeline.syncOperations
                    // Removed once the HTTP handlers are in place: it hands them what it held meanwhile.
                    defer { pipeline.removeHandler(boundSetup.value, promise: nil) }
                    if key.usesTLS {
                        logger.debug("TLS handshake done", metadata: ["connection": "\(id)", "origin": "\(key.authority)",
                                                                      "alpn": "\(negotiated == .http2 ? "h2" : "http/1.1")"])
                    }
                    switch negotiated {
                    case .http1:
                        // What `addHTTPClientHandlers` adds, kept by the connection to take them
                        // out again when it switches protocols.
                        // Response bodies are decoded by the exchange handler, only when encoded.
                        let handler = ExchangeHandler(clock: clock, decompressionRatioLimit: ratio)
                        let httpHandlers = HTTP1Connection.HTTPHandlers(
                            readObserver: ReadActivityObserver(handler: handler),
                            encoder: HTTPRequestEncoder(),
                            decoder: ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes)),
                            headerValidator: NIOHTTPRequestHeadersValidator())
                        try pipeline.addHandlers([httpHandlers.readObserver, httpHandlers.encoder, httpHandlers.decoder,
                                                  httpHandlers.headerValidator, handler])
                        let connection = HTTP1Connection(id: id, key: key, channel: channel, handler: handler,
                                                         httpHandlers: httpHandlers, pool: pool,
                                                         isDedicated: isDedicated, trustCheck: trustCheck)
                        handler.owner = connection
                        return connection
                    case .http2:
                        return try HTTP2Connection.make(id: id, key: key, channel: channel, pool: pool, clock: clock,
                                                        decompressionRatioLimit: ratio, pingInterval: pingInterval,
                                                        trustCheck: trustCheck)
                    }
                }
            }
            .flatMapErrorThrowing { error in
                connected.whenSuccess { $0.close(promise: nil) }
                throw SetupFailure(error: error, trustCheck: trustCheck)
            }
        return (future, abort)
    }

    private struct UncheckedSendableSetup: @unchecked Sendable {
        let value: ConnectionSetupHandler
    }

    private static func socksAddress(for key: ConnectionKey) -> SOCKSAddress {
        if key.hostIsIPAddress, let address = try? SocketAddress(ipAddress: key.host, port: key.port) {
            return .address(address)
        }
        return .domain(key.host, port: key.port)
    }

    /// A connection that could not be set up, with the trust check that judged its handshake.
    struct SetupFailure: Error {
        let error: any Error
        let trustCheck: ServerTrustCheck?
    }

    /// The URLError an exchange to `url` reports for a failed connection setup: the evaluator's
    /// rejection when it refused the server, else the mapped cause.
    static func urlError(for error: any Error, url: URL, key: ConnectionKey) -> URLError {
        guard let failure = error as? SetupFailure else {
            return EngineErrors.urlError(for: error, url: url, authority: key.authority)
        }
        if let trustCheck = failure.trustCheck, let rejection = trustCheck.rejection {
            guard trustCheck.reportsEvaluatorError else {
                return URLError(.serverCertificateUntrusted, userInfo: [
                    NSURLErrorFailingURLErrorKey: url,
                    NSLocalizedDescriptionKey: "The certificate of \(key.authority) is not trusted (default validation against the "
                        + "system's roots and the host name); nothing was sent.",
                ])
            }
            return ServerTrustCheck.untrusted(rejection, url: url)
        }
        return EngineErrors.urlError(for: failure.error, url: url, authority: key.authority)
    }
}

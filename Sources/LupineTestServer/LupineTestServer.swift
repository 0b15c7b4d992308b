import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import Synchronization

/// An httpbin-style HTTP/1.1 server with fault injection, for tests, demos and benchmarks.
///
/// It listens on 127.0.0.1 only, on its own small event loop group, and keeps HTTP/1.1
/// connections alive unless the client sends `Connection: close`.
public final class LupineTestServer: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let hitCounter: HitCounter
    private let floodLedger: WebSocketFloodLedger
    private let isShutDown = Mutex(false)

    /// The TCP port the server listens on.
    public let port: Int
    /// Whether the server speaks TLS (https, wss).
    public let usesTLS: Bool

    private init(group: MultiThreadedEventLoopGroup, channel: any Channel, hitCounter: HitCounter, floodLedger: WebSocketFloodLedger,
                 port: Int, usesTLS: Bool) {
        self.group = group
        self.channel = channel
        self.hitCounter = hitCounter
        self.floodLedger = floodLedger
        self.port = port
        self.usesTLS = usesTLS
    }

    /// Starts on 127.0.0.1; port 0 picks a free port. With `tls`, every connection is TLS.
    ///
    /// - Parameter maximumRequestsPerConnection: After this many requests on a connection, its last
    ///   response says `Connection: close` and the connection closes, as nginx does after
    ///   `keepalive_requests`; nil (the default) keeps connections alive for good.
    public static func start(port: Int = 0, tls: LupineTestServerTLS? = nil,
                             maximumRequestsPerConnection: Int? = nil) async throws -> LupineTestServer {
        let tlsContext = try tls.map { try NIOSSLContext(configuration: $0.configuration()) }
        // Two threads at most: the machines this runs on are small and the client needs CPU too.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: min(2, max(1, System.coreCount)))
        let hitCounter = HitCounter()
        let floodLedger = WebSocketFloodLedger()
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        hitCounter.recordConnection()
                        if let tlsContext {
                            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tlsContext))
                        }
                        try Self.configure(channel, hitCounter: hitCounter, floodLedger: floodLedger,
                                           maximumRequests: maximumRequestsPerConnection)
                    }
                }
                .bind(host: "127.0.0.1", port: port)
                .get()
            guard let boundPort = channel.localAddress?.port else {
                try? await channel.close().get()
                throw LupineTestServerError.noBoundPort
            }
            return LupineTestServer(group: group, channel: channel, hitCounter: hitCounter, floodLedger: floodLedger, port: boundPort,
                                    usesTLS: tls != nil)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    private static func configure(_ channel: any Channel, hitCounter: HitCounter, floodLedger: WebSocketFloodLedger,
                                  maximumRequests: Int?) throws {
        let pipeline = channel.pipeline.syncOperations
        let rawGate = RawWriteGate()
        try pipeline.addHandler(rawGate)
        try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: true,
                                                 withServerUpgrade: (upgraders: [webSocketUpgrader(hitCounter: hitCounter,
                                                                                                       floodLedger: floodLedger)],
                                                                     completionHandler: { _ in }),
                                                 withErrorHandling: true)
        try pipeline.addHandler(ConnectionHandler(hits: hitCounter, rawGate: rawGate, maximumRequests: maximumRequests), name: connectionHandlerName)
    }

    private static let connectionHandlerName = "lupine.connection"

    /// Upgrades `/websocket/echo` requests; the HTTP handlers leave the pipeline, the echo handler
    /// takes over.
    private static func webSocketUpgrader(hitCounter: HitCounter, floodLedger: WebSocketFloodLedger) -> NIOWebSocketServerUpgrader {
        NIOWebSocketServerUpgrader(
            maxFrameSize: 64 << 20,
            automaticErrorHandling: true,
            shouldUpgrade: { channel, head in
                channel.eventLoop.makeSucceededFuture(WebSocketRoutes.upgradeHeaders(for: head))
            },
            upgradePipelineHandler: { channel, head in
                channel.eventLoop.makeCompletedFuture {
                    hitCounter.record(TestRequest.path(ofTarget: head.uri))
                    let pipeline = channel.pipeline.syncOperations
                    pipeline.removeHandler(context: try pipeline.context(name: connectionHandlerName), promise: nil)
                    let request = TestRequest(head: head, body: ByteBuffer(), localPort: 0)
                    var headers: [String: String] = [:]
                    for (name, value) in head.headers { headers[name.lowercased()] = value }
                    try pipeline.addHandler(WebSocketEchoHandler(behaviour: WebSocketBehaviour(request), requestHeaders: headers,
                                                                 floodLedger: floodLedger))
                }
            }
        )
    }

    /// "http://127.0.0.1:<port>", or "https://..." with TLS.
    public var baseURL: String {
        "\(usesTLS ? "https" : "http")://127.0.0.1:\(port)"
    }

    /// baseURL + path (path starts with "/").
    public func url(_ path: String) -> String {
        baseURL + path
    }

    /// Closes the listening socket and every open connection. Calling it again does nothing.
    public func shutdown() async throws {
        let alreadyShutDown = isShutDown.withLock { flag in
            defer { flag = true }
            return flag
        }
        guard !alreadyShutDown else { return }
        do {
            try await channel.close().get()
        } catch ChannelError.alreadyClosed {
            // Nothing to close; the group shutdown below still has to happen.
        }
        // Shutting the group down closes the accepted connections, including stalled ones.
        try await group.shutdownGracefully()
    }

    /// Number of connections accepted so far.
    public var acceptedConnections: Int {
        hitCounter.connections
    }

    /// What the WebSocket floods (`/websocket/echo?flood=N`) of this server have written so far.
    public var webSocketFlood: WebSocketFloodProgress {
        floodLedger.current
    }

    /// Number of requests received per path (exact path without query); for tests that count hits.
    public func hits(for path: String) -> Int {
        hitCounter.hits(for: TestRequest.path(ofTarget: path))
    }
}

import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// A server for the fault matrix: it breaks every exchange (or the first few connections) at one
/// phase in one way (`FaultPlan`), over plain TCP, TLS, or HTTP/2 over TLS, on 127.0.0.1.
///
/// Connections it does not fault are served normally: each request gets a 200 with the body `ok`,
/// kept alive, unless `reuse` asks for a misbehaviour between requests. It counts the connections
/// it accepted and those still open, so a test can tell whether the client closed its side.
public final class LupineFaultServer: Sendable {
    /// What a server does between the requests of a connection it serves normally.
    public enum Reuse: Sendable {
        /// Keeps connections alive.
        case keepAlive
        /// Closes the connection shortly (50 ms) after each response, while the client holds it idle.
        case closeAfterEachResponse
        /// Answers the first request of a connection, and closes the connection without a byte
        /// on the next one (a connection that died while pooled).
        case dropLaterRequests
        /// Sends bytes past the Content-Length of the server's first response: a whole second response.
        case bytesPastContentLength
        /// Answers the first request the server receives, and closes the connection without a byte
        /// on every later one, on any connection.
        case dropAllButFirstRequest
    }

    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let counters: Counters
    /// Connections the listener keeps queued so that the kernel refuses to take more (connect/silence).
    private let fillers: [any Channel]
    private let isShutDown = Mutex(false)

    /// The TCP port the server listens on.
    public let port: Int
    /// The plan.
    public let plan: FaultPlan

    final class Counters: Sendable {
        let accepted = Mutex(0)
        let open = Mutex(0)
        let requests = Mutex(0)

        /// Counts a new connection; returns its index, from 0.
        func accept() -> Int {
            open.withLock { $0 += 1 }
            return accepted.withLock { count in
                defer { count += 1 }
                return count
            }
        }
    }

    private init(group: MultiThreadedEventLoopGroup, channel: any Channel, counters: Counters, fillers: [any Channel], port: Int,
                 plan: FaultPlan) {
        self.group = group
        self.channel = channel
        self.counters = counters
        self.fillers = fillers
        self.port = port
        self.plan = plan
    }

    /// Starts a server on a free port of 127.0.0.1.
    ///
    /// - Parameters:
    ///   - plan: Where and how exchanges break.
    ///   - tls: The server's certificate, for https and wss; nil for plain TCP.
    ///   - http2: With `tls`, speak HTTP/2 (ALPN h2 only).
    ///   - reuse: What connections served normally do between requests.
    public static func start(_ plan: FaultPlan, tls: LupineTestServerTLS? = nil, http2: Bool = false,
                             reuse: Reuse = .keepAlive) async throws -> LupineFaultServer {
        var tlsConfiguration = try tls?.configuration()
        if http2 { tlsConfiguration?.applicationProtocols = ["h2"] }
        let tlsContext = try tlsConfiguration.map { try NIOSSLContext(configuration: $0) }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let counters = Counters()
        let neverAccepts = plan.phase == .connect && plan.kind == .silence
        do {
            var bootstrap = ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            if neverAccepts {
                // A listener that never accepts, with the smallest queue: once it is full, the
                // kernel drops further SYNs and a client's connect waits without an answer.
                bootstrap = bootstrap.serverChannelOption(.backlog, value: 0).serverChannelOption(.autoRead, value: false)
            }
            let channel = try await bootstrap
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let index = counters.accept()
                        channel.closeFuture.whenComplete { _ in counters.open.withLock { $0 -= 1 } }
                        let faulted = plan.faultedConnections.map { index < $0 } ?? true
                        try FaultPipeline.configure(channel, plan: plan, faulted: faulted, tlsContext: tlsContext, http2: http2,
                                                    reuse: reuse, counters: counters)
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
            guard let boundPort = channel.localAddress?.port else {
                try? await channel.close().get()
                throw LupineTestServerError.noBoundPort
            }
            let fillers = neverAccepts ? await fillAcceptQueue(port: boundPort, group: group) : []
            return LupineFaultServer(group: group, channel: channel, counters: counters, fillers: fillers, port: boundPort, plan: plan)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Connects to the never-accepting listener until a connect no longer completes at once.
    private static func fillAcceptQueue(port: Int, group: MultiThreadedEventLoopGroup) async -> [any Channel] {
        var fillers: [any Channel] = []
        for _ in 0..<8 {
            let attempt = ClientBootstrap(group: group)
                .connectTimeout(.milliseconds(300))
                .connect(host: "127.0.0.1", port: port)
            guard let filler = try? await attempt.get() else { break }
            fillers.append(filler)
        }
        return fillers
    }

    /// "http://127.0.0.1:<port>" + path, or https (or ws/wss with `webSocket`).
    public func url(_ path: String, tls: Bool = false, webSocket: Bool = false) -> String {
        let scheme = webSocket ? (tls ? "wss" : "ws") : (tls ? "https" : "http")
        return "\(scheme)://127.0.0.1:\(port)\(path)"
    }

    /// The local ports of the server's own connections that fill a never-accepting listener's
    /// queue: client sockets of this process towards `port` that are not the client's.
    public var queuedClientPorts: Set<Int> {
        Set(fillers.compactMap { $0.localAddress?.port })
    }

    /// Connections accepted so far (the queued ones of a never-accepting listener excluded).
    public var acceptedConnections: Int { counters.accepted.withLock { $0 } }

    /// Accepted connections not closed yet.
    public var openConnections: Int { counters.open.withLock { $0 } }

    /// Request heads read so far.
    public var requestsReceived: Int { counters.requests.withLock { $0 } }

    /// Closes the listener and every connection. Calling it again does nothing.
    public func shutdown() async throws {
        let alreadyShutDown = isShutDown.withLock { flag in
            defer { flag = true }
            return flag
        }
        guard !alreadyShutDown else { return }
        for filler in fillers { try? await filler.close().get() }
        try? await channel.close().get()
        try await group.shutdownGracefully()
    }
}

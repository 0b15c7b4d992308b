import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// An HTTP/2 server for tests (TLS, ALPN h2 only), on 127.0.0.1, that misbehaves the way real
/// servers do: each request is answered on its stream by the routes of `LupineTestServer` (those
/// that do not break the socket itself), with `x-stream-id` and `x-connection` headers, plus the
/// HTTP/2 routes of `HTTP2StreamResponder` (RST_STREAM with any code, GOAWAY with streams open or
/// refusing one); `behaviour` recycles connections after a number of streams (GOAWAY) and limits
/// concurrent streams.
public final class LupineHTTP2TestServer: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let counters: Counters
    private let isShutDown = Mutex(false)

    /// The TCP port the server listens on.
    public let port: Int

    final class Counters: Sendable {
        let connections = Mutex(0)
        let openConnections = Mutex(0)
        let streams = Mutex(0)
        let pingsReceived = Mutex(0)
        let goAwaysSent = Mutex(0)
        private let hits = Mutex<[String: Int]>([:])

        /// Counts a request to `target` (path and query); returns how many there were, this one included.
        func recordHit(_ target: String) -> Int {
            hits.withLock { hits in
                hits[target, default: 0] += 1
                return hits[target, default: 0]
            }
        }

        /// Requests whose target starts with `prefix`.
        func hits(withPrefix prefix: String) -> Int {
            hits.withLock { $0.filter { $0.key.hasPrefix(prefix) }.values.reduce(0, +) }
        }
    }

    private init(group: MultiThreadedEventLoopGroup, channel: any Channel, counters: Counters, port: Int) {
        self.group = group
        self.channel = channel
        self.counters = counters
        self.port = port
    }

    /// Starts on a free port of 127.0.0.1, presenting the certificate of `tls`.
    ///
    /// - Parameter behaviour: How connections are recycled and how many streams they take.
    public static func start(tls: LupineTestServerTLS, behaviour: HTTP2ServerBehaviour = HTTP2ServerBehaviour())
        async throws -> LupineHTTP2TestServer {
        var configuration = try tls.configuration()
        configuration.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: configuration)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let counters = Counters()
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let index = counters.connections.withLock { count in
                            defer { count += 1 }
                            return count
                        }
                        counters.openConnections.withLock { $0 += 1 }
                        channel.closeFuture.whenComplete { _ in counters.openConnections.withLock { $0 -= 1 } }
                        let ledger = NIOLoopBound(HTTP2ConnectionLedger(index: index, connection: channel, behaviour: behaviour,
                                                                        counters: counters),
                                                  eventLoop: channel.eventLoop)
                        var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
                        if let limit = behaviour.maximumConcurrentStreams {
                            connectionConfiguration.initialSettings.removeAll { $0.parameter == .maxConcurrentStreams }
                            connectionConfiguration.initialSettings.append(HTTP2Setting(parameter: .maxConcurrentStreams, value: limit))
                        }
                        let pipeline = channel.pipeline.syncOperations
                        try pipeline.addHandler(NIOSSLServerHandler(context: context))
                        _ = try pipeline.configureHTTP2Pipeline(mode: .server,
                                                                connectionConfiguration: connectionConfiguration,
                                                                streamConfiguration: .init()) { stream in
                            stream.eventLoop.makeCompletedFuture {
                                counters.streams.withLock { $0 += 1 }
                                let id = try stream.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID) ?? HTTP2StreamID(0)
                                ledger.value.streamOpened(stream, id: id)
                                try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                                try stream.pipeline.syncOperations.addHandler(HTTP2StreamResponder(ledger: ledger.value, counters: counters,
                                                                                                   streamID: id))
                            }
                        }
                        try pipeline.addHandler(HTTP2FrameCounter(counters: counters))
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
            guard let boundPort = channel.localAddress?.port else {
                try? await channel.close().get()
                throw LupineTestServerError.noBoundPort
            }
            return LupineHTTP2TestServer(group: group, channel: channel, counters: counters, port: boundPort)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// "https://127.0.0.1:<port>" + path.
    public func url(_ path: String) -> String {
        "https://127.0.0.1:\(port)\(path)"
    }

    /// Connections accepted so far.
    public var acceptedConnections: Int { counters.connections.withLock { $0 } }

    /// Streams (requests) opened by clients so far (streams refused by a GOAWAY never open).
    public var openedStreams: Int { counters.streams.withLock { $0 } }

    /// Connections not closed yet, by either side.
    public var openConnections: Int { counters.openConnections.withLock { $0 } }

    /// PING frames the clients sent (not acknowledgements).
    public var pingsReceived: Int { counters.pingsReceived.withLock { $0 } }

    /// GOAWAY frames the server sent.
    public var goAwaysSent: Int { counters.goAwaysSent.withLock { $0 } }

    /// Requests whose target (path and query) starts with `prefix`, answered or reset.
    public func hits(withPrefix prefix: String) -> Int { counters.hits(withPrefix: prefix) }

    /// Closes the listener and every connection. Calling it again does nothing.
    public func shutdown() async throws {
        let alreadyShutDown = isShutDown.withLock { flag in
            defer { flag = true }
            return flag
        }
        guard !alreadyShutDown else { return }
        try? await channel.close().get()
        try await group.shutdownGracefully()
    }
}

import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// An HTTP/2 server for tests (TLS, ALPN h2 only), on 127.0.0.1: each request is answered on its
/// stream by the routes of `LupineTestServer` that answer from memory (`/get`, `/post`,
/// `/delay/...`, `/status/...`, `/gzip`...), with an `x-stream-id` header.
///
/// `/h2/reset-mid-body` sends a head announcing 64 KiB and 1 KiB of it, then resets the stream
/// (RST_STREAM with CANCEL). The compression bombs (`/gzip-bomb`...) are served too.
public final class LupineHTTP2TestServer: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let counters: Counters
    private let isShutDown = Mutex(false)

    /// The TCP port the server listens on.
    public let port: Int

    final class Counters: Sendable {
        let connections = Mutex(0)
        let streams = Mutex(0)
    }

    private init(group: MultiThreadedEventLoopGroup, channel: any Channel, counters: Counters, port: Int) {
        self.group = group
        self.channel = channel
        self.counters = counters
        self.port = port
    }

    /// Starts on a free port of 127.0.0.1, presenting the certificate of `tls`.
    public static func start(tls: LupineTestServerTLS) async throws -> LupineHTTP2TestServer {
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
                        counters.connections.withLock { $0 += 1 }
                        let pipeline = channel.pipeline.syncOperations
                        try pipeline.addHandler(NIOSSLServerHandler(context: context))
                        _ = try pipeline.configureHTTP2Pipeline(mode: .server,
                                                                connectionConfiguration: .init(),
                                                                streamConfiguration: .init()) { stream in
                            stream.eventLoop.makeCompletedFuture {
                                counters.streams.withLock { $0 += 1 }
                                try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                                try stream.pipeline.syncOperations.addHandler(HTTP2StreamResponder())
                            }
                        }
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

    /// Streams (requests) opened by clients so far.
    public var openedStreams: Int { counters.streams.withLock { $0 } }

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

/// Answers the request of one HTTP/2 stream.
final class HTTP2StreamResponder: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private var head: HTTPRequestHead?
    private var body = ByteBuffer()

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let .head(head):
            self.head = head
        case var .body(buffer):
            body.writeBuffer(&buffer)
        case .end:
            guard let head else { return }
            respond(to: TestRequest(head: head, body: body, localPort: 0), context: context)
        }
    }

    private func respond(to request: TestRequest, context: ChannelHandlerContext) {
        if request.path == "/h2/reset-mid-body" {
            var headers = HTTPHeaders([("content-length", "65536")])
            headers.add(name: "x-stream-id", value: streamID(of: context))
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http2, status: .ok, headers: headers))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(repeating: 0x61, count: 1024)))), promise: nil)
            // Closing a stream channel before its end resets the stream.
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(50)) { context.close(promise: nil) }
            return
        }
        if request.path == "/h2/no-content-length" {
            // A body whose length the head does not announce: the stream's end ends it.
            let headers = HTTPHeaders([("content-type", "text/plain"), ("x-stream-id", streamID(of: context))])
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http2, status: .ok, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "no length announced")))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        perform(Router.plan(for: request), context: context)
    }

    private func perform(_ plan: ResponsePlan, context: ChannelHandlerContext) {
        switch plan {
        case var .response(response):
            response.headers.replaceOrAdd(name: "x-stream-id", value: streamID(of: context))
            response.headers.replaceOrAdd(name: "content-length", value: String(response.body.readableBytes))
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http2, status: response.status, headers: response.headers))),
                          promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(response.body))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        case let .delayed(delay, next):
            context.eventLoop.assumeIsolated().scheduleTask(in: delay) { self.perform(next, context: context) }
        case let .compressionBomb(bomb):
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            Task {
                let body = try? await CompressionBombCache.shared.body(bomb)
                bound.eventLoop.execute {
                    let (responder, context) = bound.value
                    var response = TestResponse(status: body == nil ? .internalServerError : .ok,
                                                headers: ["content-type": "application/octet-stream"], body: body ?? ByteBuffer())
                    if body != nil { response.headers.add(name: "content-encoding", value: bomb.coding.rawValue) }
                    responder.perform(.response(response), context: context)
                }
            }
        default:
            let message = ByteBuffer(string: "not served over HTTP/2 by the test server\n")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http2, status: .notImplemented,
                                                                 headers: ["content-length": "\(message.readableBytes)"]))),
                          promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(message))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }

    private func streamID(of context: ChannelHandlerContext) -> String {
        (try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)).map { "\(Int($0))" } ?? "?"
    }
}

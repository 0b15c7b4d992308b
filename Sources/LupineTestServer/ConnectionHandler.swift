import NIOCore
import NIOHTTP1
import NIOWebSocket

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One per connection: collects each request, asks `Router` for a plan and carries it out.
///
/// `HTTPServerPipelineHandler` sits in front of this handler, so a pipelined request is only
/// delivered once the previous response has ended; at most one exchange is in flight.
final class ConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    static let maximumBodySize = 64 * 1024 * 1024
    /// Stalled exchanges are closed after this, so a client that never hangs up cannot leak a connection.
    static let stallTimeout = TimeAmount.seconds(60)

    /// What the handler must remember about the request while answering it.
    private struct Exchange {
        var isHead: Bool
        var keepAlive: Bool
        var version: HTTPVersion
    }

    private enum State {
        case idle
        case receiving(HTTPRequestHead, ByteBuffer)
        /// Taking a body of any size without keeping it (`UploadSink`).
        case sinking(HTTPRequestHead, UploadSink)
        /// The connection is about to close; further input is ignored.
        case closing
        /// Waiting on a timer or background work before (or while) responding.
        case responding(Exchange)
        case streaming(Exchange, BodyPump, StreamEnding)
        case closed
    }

    private let hits: HitCounter
    private let rawGate: RawWriteGate
    /// After this many requests the connection's last response says `Connection: close` and the
    /// connection closes (nginx's `keepalive_requests`); nil: no limit.
    private let maximumRequests: Int?
    private var requestsServed = 0
    private var state = State.idle
    private var timer: Scheduled<Void>?
    /// Set by `/fault/drop-next`: the next request on this connection is answered by closing it,
    /// as a server does that closes a kept-alive connection just as the client reuses it.
    private var dropsNextRequest = false

    init(hits: HitCounter, rawGate: RawWriteGate, maximumRequests: Int? = nil) {
        self.hits = hits
        self.rawGate = rawGate
        self.maximumRequests = maximumRequests
    }

    // MARK: Receiving

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            receiveHead(head, context: context)
        case .body(var chunk):
            if case .sinking(let head, var sink) = state {
                sink.consume(chunk)
                state = .sinking(head, sink)
                return
            }
            guard case .receiving(let head, var body) = state else { return }
            guard body.readableBytes + chunk.readableBytes <= Self.maximumBodySize else {
                rejectOversizedBody(head, context: context)
                return
            }
            // Drop the state's reference first so appending does not copy the whole buffer.
            state = .idle
            body.writeBuffer(&chunk)
            state = .receiving(head, body)
        case .end:
            if case .sinking(let head, let sink) = state {
                let exchange = Exchange(isHead: false, keepAlive: head.isKeepAlive, version: head.version)
                state = .responding(exchange)
                sendComplete(sink.report(), exchange, context: context)
                return
            }
            guard case .receiving(let head, let body) = state else { return }
            respond(to: head, body: body, context: context)
        }
    }

    private func receiveHead(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard case .idle = state else { return }
        let path = TestRequest.path(ofTarget: head.uri)
        if dropsNextRequest {
            state = .closing
            context.close(promise: nil)
            return
        }
        if path == "/fault/drop-next" { dropsNextRequest = true }
        hits.record(path)
        if UploadSink.handles(path) {
            state = .sinking(head, UploadSink(head: head, path: path))
            answerExpectContinue(head, context: context)
            return
        }
        if let declared = head.headers.first(name: "content-length").flatMap(Int.init),
            declared > Self.maximumBodySize
        {
            rejectOversizedBody(head, context: context)
            return
        }
        state = .receiving(head, context.channel.allocator.buffer(capacity: 0))
        answerExpectContinue(head, context: context)
    }

    /// Clients such as curl wait (about a second) for this before sending a large body.
    private func answerExpectContinue(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        if head.headers[canonicalForm: "expect"].contains(where: { $0.lowercased() == "100-continue" }) {
            let interim = HTTPResponseHead(version: head.version, status: .continue)
            context.writeAndFlush(wrapOutboundOut(.head(interim)), promise: nil)
        }
    }

    private func rejectOversizedBody(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let exchange = Exchange(isHead: head.method == .HEAD, keepAlive: false, version: head.version)
        sendComplete(.error(.payloadTooLarge, "request body exceeds 64 MiB"), exchange, context: context)
    }

    private func respond(to head: HTTPRequestHead, body: ByteBuffer, context: ChannelHandlerContext) {
        let request = TestRequest(head: head, body: body, localPort: context.channel.localAddress?.port ?? 0)
        requestsServed += 1
        let lastAllowed = maximumRequests.map { requestsServed >= $0 } ?? false
        let exchange = Exchange(isHead: request.isHead, keepAlive: head.isKeepAlive && !lastAllowed, version: head.version)
        state = .responding(exchange)
        perform(Router.plan(for: request), exchange, context: context)
    }

    // MARK: Carrying out plans

    private func perform(_ plan: ResponsePlan, _ exchange: Exchange, context: ChannelHandlerContext) {
        switch plan {
        case .response(let response):
            sendComplete(response, exchange, context: context)
        case .delayed(let delay, let next):
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: delay) {
                self.timer = nil
                guard case .responding = self.state else { return }
                self.perform(next, exchange, context: context)
            }
        case .randomBytes(let count, let seed):
            let headers: HTTPHeaders = [
                "Content-Type": "application/octet-stream",
                "Content-Length": String(count),
            ]
            writeHead(.ok, headers, exchange, context: context)
            stream(count: exchange.isHead ? 0 : count, seed: seed, then: .endResponse, exchange, context: context)
        case .byteRange(let range):
            writeHead(range.status, range.headers, exchange, context: context)
            let count = exchange.isHead ? 0 : range.count
            // The head leaves with the first body chunk, as a server writes a small response in
            // one go; alone only when no body follows it (a stall would otherwise hold it back).
            if count == 0 { context.flush() }
            stream(count: count, seed: range.seed, offset: range.offset, then: range.ending, exchange, context: context)
        case .chunkedLines(let lines, let contentType, let ending):
            let exchange = Self.chunked(exchange)
            writeHead(.ok, ["Content-Type": contentType], exchange, context: context)
            var lastWrite: EventLoopFuture<Void>?
            if !exchange.isHead {
                for line in lines {
                    lastWrite = context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(line))))
                }
            }
            switch ending {
            case .endResponse:
                finishResponse(exchange, context: context)
            case .closeConnection:
                state = .closing
                // Once the bytes are on the wire: closing at once could discard them.
                guard let lastWrite else {
                    context.close(promise: nil)
                    break
                }
                lastWrite.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            case .stall:
                context.flush()
                armStallTimeout(context: context)
            }
        case .drip(let schedule, let status):
            startDrip(schedule, status: status, Self.chunked(exchange), context: context)
        case let .compressionBomb(bomb):
            sendCompressionBomb(bomb, exchange, context: context)
        case .interim(let responses, let next):
            for response in responses {
                let head = HTTPResponseHead(version: exchange.version, status: response.status, headers: response.headers)
                context.writeAndFlush(wrapOutboundOut(.head(head)), promise: nil)
            }
            perform(next, exchange, context: context)
        case .trailers(let response, let trailers):
            let exchange = Self.chunked(exchange)
            writeHead(response.status, response.headers, exchange, context: context)
            if !exchange.isHead {
                context.write(wrapOutboundOut(.body(.byteBuffer(response.body))), promise: nil)
            }
            finishResponse(exchange, trailers: exchange.isHead ? nil : trailers, context: context)
        case .fault(let fault):
            perform(fault, exchange, context: context)
        }
    }

    private func perform(_ fault: Fault, _ exchange: Exchange, context: ChannelHandlerContext) {
        switch fault {
        case .stall:
            armStallTimeout(context: context)
        case .truncatedBody(let declaredLength, let sentLength, let ending):
            let headers: HTTPHeaders = [
                "Content-Type": "application/octet-stream",
                "Content-Length": String(declaredLength),
            ]
            writeHead(.ok, headers, exchange, context: context)
            context.flush()
            stream(count: exchange.isHead ? 0 : sentLength, seed: 0, then: ending, exchange, context: context)
        case .reset:
            state = .closing
            guard let provider = context.channel as? SocketOptionProvider else {
                context.close(promise: nil)
                return
            }
            // Linger 0 turns close() into a TCP RST instead of an orderly FIN.
            provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        case .rawBytesThenClose(let bytes):
            state = .closing
            guard let written = rawGate.writeAndFlush(bytes) else {
                context.close(promise: nil)
                return
            }
            written.assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        case .rawBytesThenStall(let bytes):
            state = .closing
            guard rawGate.writeAndFlush(bytes) != nil else {
                context.close(promise: nil)
                return
            }
            armStallTimeout(context: context)
        case .rawEndless(let head, let chunk):
            state = .closing
            RawRepeater(gate: rawGate, chunk: chunk).start(head: head, context: context)
        case .dribble(let bytes, let interval):
            state = .closing
            dribble(bytes, every: interval, context: context)
        }
    }

    /// Bodies without a length can only be delimited by closing on HTTP/1.0, which has no chunking.
    private static func chunked(_ exchange: Exchange) -> Exchange {
        var exchange = exchange
        if exchange.version.major == 1 && exchange.version.minor == 0 {
            exchange.keepAlive = false
        }
        return exchange
    }

    private func writeHead(
        _ status: HTTPResponseStatus,
        _ headers: HTTPHeaders,
        _ exchange: Exchange,
        context: ChannelHandlerContext
    ) {
        var headers = headers
        if !exchange.keepAlive {
            headers.replaceOrAdd(name: "Connection", value: "close")
        } else if exchange.version.major == 1 && exchange.version.minor == 0 {
            headers.replaceOrAdd(name: "Connection", value: "keep-alive")
        }
        let head = HTTPResponseHead(version: exchange.version, status: status, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
    }

    private func sendComplete(_ response: TestResponse, _ exchange: Exchange, context: ChannelHandlerContext) {
        var headers = response.headers
        let allowsContent = TestResponse.allowsContent(response.status)
        if allowsContent {
            headers.replaceOrAdd(name: "Content-Length", value: String(response.body.readableBytes))
        }
        writeHead(response.status, headers, exchange, context: context)
        if allowsContent && !exchange.isHead && response.body.readableBytes > 0 {
            context.write(wrapOutboundOut(.body(.byteBuffer(response.body))), promise: nil)
        }
        finishResponse(exchange, context: context)
    }

    private func finishResponse(_ exchange: Exchange, trailers: HTTPHeaders? = nil, context: ChannelHandlerContext) {
        // Set before writing .end: the pipelining handler may deliver the next request during that write.
        state = exchange.keepAlive ? .idle : .closing
        let written = context.writeAndFlush(wrapOutboundOut(.end(trailers)))
        if !exchange.keepAlive {
            written.assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        }
    }

    private func armStallTimeout(context: ChannelHandlerContext) {
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.stallTimeout) {
            self.timer = nil
            context.close(promise: nil)
        }
    }

    /// Writes the first byte of `bytes` now and the next one `interval` later, until all are
    /// written; then closes.
    private func dribble(_ bytes: ByteBuffer, every interval: TimeAmount, context: ChannelHandlerContext) {
        var rest = bytes
        guard let byte = rest.readSlice(length: 1) else {
            context.close(promise: nil)
            return
        }
        guard rawGate.writeAndFlush(byte) != nil else {
            context.close(promise: nil)
            return
        }
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: interval) {
            self.timer = nil
            guard context.channel.isActive else { return }
            self.dribble(rest, every: interval, context: context)
        }
    }

    // MARK: Streamed bodies

    private func stream(
        count: UInt64,
        seed: UInt64,
        offset: UInt64 = 0,
        then ending: StreamEnding,
        _ exchange: Exchange,
        context: ChannelHandlerContext
    ) {
        state = .streaming(exchange, BodyPump(count: count, seed: seed, offset: offset), ending)
        continueStreaming(context: context)
    }

    private func continueStreaming(context: ChannelHandlerContext) {
        guard case .streaming(let exchange, let pump, let ending) = state else { return }
        let progress = pump.pump(channel: context.channel) { chunk in
            context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(chunk))))
        }
        switch progress {
        case .busy, .waitingForWritability:
            break
        case .yielded:
            context.eventLoop.assumeIsolated().execute {
                self.continueStreaming(context: context)
            }
        case .finished(let lastWrite):
            switch ending {
            case .endResponse:
                finishResponse(exchange, context: context)
            case .closeConnection:
                state = .closing
                lastWrite.assumeIsolated().whenComplete { _ in
                    context.close(promise: nil)
                }
            case .stall:
                state = .responding(exchange)
                armStallTimeout(context: context)
            }
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            continueStreaming(context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    // MARK: Drip

    private func startDrip(
        _ schedule: DripSchedule,
        status: HTTPResponseStatus,
        _ exchange: Exchange,
        context: ChannelHandlerContext
    ) {
        state = .responding(exchange)
        writeHead(status, ["Content-Type": "application/octet-stream"], exchange, context: context)
        guard !exchange.isHead else {
            finishResponse(exchange, context: context)
            return
        }
        context.flush()
        dripTick(schedule, start: .now(), sent: 0, exchange, context: context)
    }

    private func dripTick(
        _ schedule: DripSchedule,
        start: NIODeadline,
        sent alreadySent: Int,
        _ exchange: Exchange,
        context: ChannelHandlerContext
    ) {
        guard case .responding = state, context.channel.isActive else { return }
        var sent = alreadySent
        let due = schedule.bytesDue(after: .now() - start)
        if due > sent {
            let chunk = ByteBuffer(repeating: UInt8(ascii: "*"), count: due - sent)
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(chunk))), promise: nil)
            sent = due
        }
        if sent >= schedule.totalBytes && NIODeadline.now() - start >= schedule.duration {
            finishResponse(exchange, context: context)
            return
        }
        let deadline = max(start + schedule.nextEvent(afterSending: sent), .now() + DripSchedule.minimumTick)
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.timer = nil
            self.dripTick(schedule, start: start, sent: sent, exchange, context: context)
        }
    }

    // MARK: Compression bomb

    private func sendCompressionBomb(_ bomb: CompressionBomb, _ exchange: Exchange, context: ChannelHandlerContext) {
        let body = context.eventLoop.makeFutureWithTask {
            try await CompressionBombCache.shared.body(bomb)
        }
        body.assumeIsolated().whenComplete { result in
            guard case .responding = self.state else { return }
            switch result {
            case .success(let body):
                let headers: HTTPHeaders = [
                    "Content-Type": "application/octet-stream",
                    "Content-Encoding": bomb.coding.rawValue,
                ]
                self.sendComplete(TestResponse(headers: headers, body: body), exchange, context: context)
            case .failure(let error):
                self.sendComplete(.error(.internalServerError, "\(bomb.coding.rawValue) bomb failed: \(error)"), exchange, context: context)
            }
        }
    }

    // MARK: Lifecycle

    func channelInactive(context: ChannelHandlerContext) {
        state = .closed
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A refused WebSocket upgrade is reported as an error, then delivered here as a plain request.
        guard !(error is NIOWebSocketUpgradeError) else { return }
        // Connection errors (resets, bad input the HTTP layer already answered) end only this connection.
        state = .closing
        context.close(promise: nil)
    }
}

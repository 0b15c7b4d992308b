import NIOCore
import NIOHTTP1
import NIOHTTP2

/// Answers the request of one stream of a `LupineHTTP2TestServer`: the routes of `LupineTestServer`
/// (`Router`), with an `x-stream-id` and an `x-connection` header, plus the HTTP/2 misbehaviours
/// under `/h2/`:
///
/// - `/h2/reset-mid-body`: a head announcing 64 KiB, 1 KiB of it, then RST_STREAM (CANCEL).
/// - `/h2/no-content-length`: a body whose length the head does not announce.
/// - `/h2/rst/CODE?after=none|head|end&times=N`: RST_STREAM with CODE (a name such as
///   `REFUSED_STREAM`, or a number) before any response, after a head announcing 64 KiB (and 7
///   bytes of it), or after
///   a whole response (sent as soon as the request head arrives, before any request body: a
///   server ending an upload it does not need, RFC 9113 section 8.1). With `times`, only the first
///   N requests to the same target are reset; later ones get `ok`.
/// - `/h2/goaway?last=this|previous&delay=S`: GOAWAY naming this stream as the last one taken (the
///   response `ok` follows after `delay` seconds), or the one before it, which refuses this stream
///   unprocessed (only the first request to the same target; later ones get `ok`).
final class HTTP2StreamResponder: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let ledger: HTTP2ConnectionLedger
    private let counters: LupineHTTP2TestServer.Counters
    private let streamID: HTTP2StreamID
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()
    /// The response was sent before the request ended.
    private var answeredEarly = false
    private var timer: Scheduled<Void>?
    private var pump: (BodyPump, StreamEnding)?

    init(ledger: HTTP2ConnectionLedger, counters: LupineHTTP2TestServer.Counters, streamID: HTTP2StreamID) {
        self.ledger = ledger
        self.counters = counters
        self.streamID = streamID
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let .head(head):
            self.head = head
            let request = TestRequest(head: head, body: ByteBuffer(), localPort: 0)
            if request.path.hasPrefix("/h2/rst/"), request.queryValue("after") == "end" {
                answeredEarly = true
                respond(to: request, context: context)
            }
        case var .body(buffer):
            if !answeredEarly { body.writeBuffer(&buffer) }
        case .end:
            guard let head, !answeredEarly else { return }
            respond(to: TestRequest(head: head, body: body, localPort: 0), context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        pump = nil
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { continuePumping(context: context) }
        context.fireChannelWritabilityChanged()
    }

    // MARK: Routes

    private func respond(to request: TestRequest, context: ChannelHandlerContext) {
        let hit = counters.recordHit(request.head.uri)
        switch request.path {
        case "/h2/reset-mid-body":
            writeHead(.ok, ["content-length": "65536"], context: context)
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(repeating: 0x61, count: 1024)))), promise: nil)
            // Closing a stream channel before its end resets the stream.
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(50)) { context.close(promise: nil) }
        case "/h2/no-content-length":
            writeHead(.ok, ["content-type": "text/plain"], context: context)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "no length announced")))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        case "/h2/goaway":
            goAway(request, hit: hit, context: context)
        case let path where path.hasPrefix("/h2/rst/"):
            reset(request, code: String(path.dropFirst("/h2/rst/".count)), hit: hit, context: context)
        default:
            perform(Router.plan(for: request), context: context)
        }
    }

    private func goAway(_ request: TestRequest, hit: Int, context: ChannelHandlerContext) {
        switch request.queryValue("last") ?? "this" {
        case "previous" where hit == 1:
            // This stream is above the last one taken: refused, never answered.
            ledger.sendGoAway(lastStreamID: HTTP2StreamID(max(0, Int(streamID) - 2)))
        case "previous":
            sendOK(context: context)
        default:
            ledger.sendGoAway(lastStreamID: streamID)
            let delay = Double(request.queryValue("delay") ?? "0") ?? 0
            perform(.delayed(.milliseconds(Int64(max(0, min(delay, 30)) * 1000)), .response(.text("ok\n", contentType: "text/plain"))),
                    context: context)
        }
    }

    private func reset(_ request: TestRequest, code text: String, hit: Int, context: ChannelHandlerContext) {
        guard let code = Self.errorCode(named: text) else {
            perform(.response(.error(.badRequest, "unknown HTTP/2 error code \(text)")), context: context)
            return
        }
        if let times = request.queryValue("times").flatMap(Int.init), hit > times {
            sendOK(context: context)
            return
        }
        // The reset goes on the connection, past the stream's own writes: it waits until they
        // have left the stream.
        let written: EventLoopFuture<Void>
        switch request.queryValue("after") ?? "none" {
        case "head":
            writeHead(.ok, ["content-length": "65536"], context: context)
            written = context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "partial")))))
        case "end":
            let response = TestResponse.text("ok\n", contentType: "text/plain")
            writeHead(.ok, ["content-length": "\(response.body.readableBytes)"], context: context)
            context.write(wrapOutboundOut(.body(.byteBuffer(response.body))), promise: nil)
            written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        default:
            written = context.eventLoop.makeSucceededVoidFuture()
        }
        let (ledger, streamID) = (ledger, streamID)
        written.assumeIsolated().whenComplete { _ in ledger.reset(streamID, code: code) }
    }

    /// HTTP/2 error codes by their RFC 9113 names, or a number.
    static func errorCode(named name: String) -> HTTP2ErrorCode? {
        let names: [String: HTTP2ErrorCode] = [
            "NO_ERROR": .noError, "PROTOCOL_ERROR": .protocolError, "INTERNAL_ERROR": .internalError,
            "FLOW_CONTROL_ERROR": .flowControlError, "SETTINGS_TIMEOUT": .settingsTimeout, "STREAM_CLOSED": .streamClosed,
            "FRAME_SIZE_ERROR": .frameSizeError, "REFUSED_STREAM": .refusedStream, "CANCEL": .cancel,
            "COMPRESSION_ERROR": .compressionError, "CONNECT_ERROR": .connectError, "ENHANCE_YOUR_CALM": .enhanceYourCalm,
            "INADEQUATE_SECURITY": .inadequateSecurity, "HTTP_1_1_REQUIRED": .http11Required,
        ]
        if let code = names[name.uppercased()] { return code }
        return UInt32(name).map { HTTP2ErrorCode(networkCode: Int($0)) }
    }

    // MARK: Plans

    private func perform(_ plan: ResponsePlan, context: ChannelHandlerContext) {
        switch plan {
        case var .response(response):
            response.headers.replaceOrAdd(name: "content-length", value: String(response.body.readableBytes))
            writeHead(response.status, response.headers, context: context)
            context.write(wrapOutboundOut(.body(.byteBuffer(response.body))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        case let .delayed(delay, next):
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: delay) { self.perform(next, context: context) }
        case let .interim(responses, next):
            for response in responses {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http2, status: response.status,
                                                                             headers: response.headers))), promise: nil)
            }
            perform(next, context: context)
        case let .trailers(response, trailers):
            writeHead(response.status, response.headers, context: context)
            context.write(wrapOutboundOut(.body(.byteBuffer(response.body))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(trailers)), promise: nil)
        case let .drip(schedule, status):
            writeHead(status, ["content-type": "application/octet-stream"], context: context)
            context.flush()
            dripTick(schedule, start: .now(), sent: 0, context: context)
        case let .randomBytes(count, seed):
            writeHead(.ok, ["content-type": "application/octet-stream", "content-length": String(count)], context: context)
            pump(BodyPump(count: count, seed: seed), then: .endResponse, context: context)
        case let .byteRange(range):
            writeHead(range.status, range.headers, context: context)
            pump(BodyPump(count: range.count, seed: range.seed, offset: range.offset), then: range.ending, context: context)
        case let .chunkedLines(lines, contentType, ending):
            writeHead(.ok, ["content-type": contentType], context: context)
            for line in lines { context.write(wrapOutboundOut(.body(.byteBuffer(line))), promise: nil) }
            end(ending, context: context)
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
        case .fault(.stall):
            // Nothing more: the stream stays open until the client gives up or the connection closes.
            break
        case .fault:
            perform(.response(.error(.notImplemented, "this fault is a socket misbehaviour of HTTP/1.1")), context: context)
        }
    }

    private func sendOK(context: ChannelHandlerContext) {
        perform(.response(.text("ok\n", contentType: "text/plain")), context: context)
    }

    private func writeHead(_ status: HTTPResponseStatus, _ headers: HTTPHeaders, context: ChannelHandlerContext) {
        var headers = headers
        headers.replaceOrAdd(name: "x-stream-id", value: "\(Int(streamID))")
        headers.replaceOrAdd(name: "x-connection", value: "\(ledger.index)")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http2, status: status, headers: headers))), promise: nil)
    }

    private func end(_ ending: StreamEnding, context: ChannelHandlerContext) {
        switch ending {
        case .endResponse: context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        case .closeConnection: ledger.reset(streamID, code: .cancel)
        case .stall: context.flush()
        }
    }

    private func pump(_ pump: BodyPump, then ending: StreamEnding, context: ChannelHandlerContext) {
        self.pump = (pump, ending)
        continuePumping(context: context)
    }

    private func continuePumping(context: ChannelHandlerContext) {
        guard let (pump, ending) = pump else { return }
        let progress = pump.pump(channel: context.channel) { chunk in
            context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(chunk))))
        }
        switch progress {
        case .busy, .waitingForWritability:
            break
        case .yielded:
            context.eventLoop.assumeIsolated().execute { self.continuePumping(context: context) }
        case .finished:
            self.pump = nil
            end(ending, context: context)
        }
    }

    private func dripTick(_ schedule: DripSchedule, start: NIODeadline, sent alreadySent: Int, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        var sent = alreadySent
        let due = schedule.bytesDue(after: .now() - start)
        if due > sent {
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(repeating: UInt8(ascii: "*"), count: due - sent)))),
                                  promise: nil)
            sent = due
        }
        if sent >= schedule.totalBytes, NIODeadline.now() - start >= schedule.duration {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        let deadline = max(start + schedule.nextEvent(afterSending: sent), .now() + DripSchedule.minimumTick)
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.dripTick(schedule, start: start, sent: sent, context: context)
        }
    }
}

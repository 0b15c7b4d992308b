import Crypto
import NIOCore
import NIOHTTP1

/// One HTTP/1.1 connection of a `LupineFaultServer`: reads requests with SwiftNIO's decoder and
/// answers with raw bytes, breaking the exchange as its plan says (nil: served normally).
final class FaultHTTP1Handler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = ByteBuffer

    /// A faulted connection is closed after this, so that a client that never gives up cannot keep it.
    static let safetyTimeout = TimeAmount.seconds(30)

    private let plan: FaultPlan?
    private let reuse: LupineFaultServer.Reuse
    private let counters: LupineFaultServer.Counters
    private var requestsOnConnection = 0
    /// The current request's number among all the server's requests, from 1.
    private var requestIndexOnServer = 0
    private var head: HTTPRequestHead?
    private var faultApplied = false
    private var timers: [Scheduled<Void>] = []
    private var closed = false

    init(plan: FaultPlan?, reuse: LupineFaultServer.Reuse, counters: LupineFaultServer.Counters) {
        self.plan = plan
        self.reuse = reuse
        self.counters = counters
    }

    func handlerAdded(context: ChannelHandlerContext) {
        guard plan != nil else { return }
        timers.append(context.eventLoop.assumeIsolated().scheduleTask(in: Self.safetyTimeout) { context.close(promise: nil) })
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed = true
        timers.forEach { $0.cancel() }
        timers.removeAll()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    // MARK: Requests

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let .head(head):
            let received = counters.requests.withLock { count in
                count += 1
                return count
            }
            requestsOnConnection += 1
            requestIndexOnServer = received
            self.head = head
            if plan == nil, (reuse == .dropLaterRequests && requestsOnConnection > 1) || (reuse == .dropAllButFirstRequest && received > 1) {
                context.close(promise: nil)
                return
            }
            if let plan, plan.phase == .requestBody { requestBodyBegins(plan.kind, context: context) }
        case .body:
            if let plan, plan.phase == .requestBody, !faultApplied { requestBodyArrives(plan.kind, context: context) }
        case .end:
            guard let head else { return }
            self.head = nil
            guard let plan, !faultApplied else {
                if plan == nil || plan?.phase != .requestBody { respondNormally(to: head, context: context) }
                return
            }
            switch plan.phase {
            case .responseHead: breakResponseHead(plan.kind, context: context)
            case .responseBody: breakResponseBody(plan.kind, context: context)
            case .webSocketFrames: upgrade(head, kind: plan.kind, context: context)
            case .requestBody, .connect, .tlsHandshake: respondNormally(to: head, context: context)
            }
        }
    }

    private func requestBodyBegins(_ kind: FaultKind, context: ChannelHandlerContext) {
        switch kind {
        case .silence:
            faultApplied = true
            // Nothing more is read: the client's writes stall once the socket buffers are full.
            context.channel.setOption(.autoRead, value: false).whenComplete { _ in }
        case .drip:
            faultApplied = true
            context.channel.setOption(.autoRead, value: false).whenComplete { _ in }
            readEvery100Milliseconds(context: context)
        case .oversized:
            faultApplied = true
            // Refused at once, and the rest of the body read and dropped.
            write("HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", context: context)
        case .reset, .close, .garbage:
            break
        }
    }

    private func readEvery100Milliseconds(context: ChannelHandlerContext) {
        timers.append(context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(100)) {
            guard !self.closed else { return }
            context.read()
            self.readEvery100Milliseconds(context: context)
        })
    }

    private func requestBodyArrives(_ kind: FaultKind, context: ChannelHandlerContext) {
        faultApplied = true
        switch kind {
        case .reset: FaultPipeline.reset(context.channel)
        case .close: context.close(promise: nil)
        case .garbage: context.writeAndFlush(wrapOutboundOut(FaultPipeline.garbage), promise: nil)
        case .silence, .drip, .oversized: break
        }
    }

    // MARK: Responses

    private func write(_ text: String, context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: text)), promise: nil)
    }

    private func respondNormally(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        var response = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"
        if reuse == .bytesPastContentLength, requestIndexOnServer == 1 {
            response += "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nsmuggled"
        }
        write(response, context: context)
        if !head.isKeepAlive {
            context.close(promise: nil)
        } else if reuse == .closeAfterEachResponse {
            timers.append(context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(50)) { context.close(promise: nil) })
        }
    }

    private func breakResponseHead(_ kind: FaultKind, context: ChannelHandlerContext) {
        switch kind {
        case .silence:
            break
        case .reset:
            FaultPipeline.reset(context.channel)
        case .close:
            context.close(promise: nil)
        case .garbage:
            context.writeAndFlush(wrapOutboundOut(FaultPipeline.garbage), promise: nil)
        case .oversized:
            write("HTTP/1.1 200 OK\r\nX-Big: " + String(repeating: "a", count: 128 * 1024) + "\r\nContent-Length: 2\r\n\r\nok",
                  context: context)
        case .drip:
            write("HTTP/1.1 200 OK\r\n", context: context)
            drip(context: context) { "X-Drip: a\r\n" }
        }
    }

    private func breakResponseBody(_ kind: FaultKind, context: ChannelHandlerContext) {
        let first = String(repeating: "x", count: 1024)
        let lengthHead = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 1048576\r\n\r\n"
        let chunkedHead = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        switch kind {
        case .silence:
            write(lengthHead + first, context: context)
        case .reset:
            write(lengthHead + first, context: context)
            FaultPipeline.reset(context.channel)
        case .close:
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: lengthHead + first))).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        case .garbage:
            write(chunkedHead + "400\r\n" + first + "\r\nzz\r\nnot a chunk\r\n", context: context)
        case .oversized:
            write(chunkedHead + "400\r\n" + first + "\r\nFFFFFFFFFFFFFFFFFFFFFFFFFFFF\r\n", context: context)
        case .drip:
            write(lengthHead, context: context)
            drip(context: context) { "x" }
        }
    }

    /// Writes `next()` every 100 ms until the connection closes.
    private func drip(context: ChannelHandlerContext, _ next: @escaping () -> String) {
        timers.append(context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(100)) {
            guard !self.closed else { return }
            self.write(next(), context: context)
            self.drip(context: context, next)
        })
    }

    // MARK: WebSocket

    private func upgrade(_ head: HTTPRequestHead, kind: FaultKind, context: ChannelHandlerContext) {
        guard let key = head.headers.first(name: "sec-websocket-key") else {
            write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", context: context)
            return
        }
        let digest = Insecure.SHA1.hash(data: Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))
        let accept = Base64.encode(Array(digest))
        write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n",
              context: context)
        // From now on the client sends frames: the HTTP decoder and this handler leave.
        let pipeline = context.pipeline.syncOperations
        do {
            try pipeline.addHandler(WebSocketFaultHandler(kind: kind))
            if let decoder = try? pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self) {
                pipeline.removeHandler(decoder, promise: nil)
            }
            pipeline.removeHandler(self, promise: nil)
        } catch {
            context.close(promise: nil)
        }
    }
}

/// The frames of a WebSocket connection after the upgrade, broken as told. What the client sends
/// is read and dropped.
final class WebSocketFaultHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let kind: FaultKind
    private var timer: Scheduled<Void>?

    init(kind: FaultKind) {
        self.kind = kind
    }

    func handlerAdded(context: ChannelHandlerContext) {
        switch kind {
        case .silence:
            break
        case .reset:
            FaultPipeline.reset(context.channel)
        case .close:
            context.close(promise: nil)
        case .garbage:
            // A text frame with a reserved bit set, no extension having been agreed.
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: [0xC1, 0x01, 0x61])), promise: nil)
        case .oversized:
            // A binary frame announcing 2^40 bytes.
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: [0x82, 127, 0, 0, 1, 0, 0, 0, 0, 0])), promise: nil)
        case .drip:
            let message = Array("0123456789abcdef".utf8)
            let frame = [0x81, UInt8(message.count)] + message + [0x88, 0x02, 0x03, 0xE8]
            drip(frame[...], context: context)
        }
    }

    private func drip(_ bytes: ArraySlice<UInt8>, context: ChannelHandlerContext) {
        guard let first = bytes.first else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(80)) {
            guard context.channel.isActive else { return }
            context.writeAndFlush(self.wrapOutboundOut(ByteBuffer(bytes: [first])), promise: nil)
            self.drip(bytes.dropFirst(), context: context)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        context.fireChannelInactive()
    }
}

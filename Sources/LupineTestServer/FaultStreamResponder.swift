import NIOCore
import NIOHTTP1
import NIOHTTP2

/// One HTTP/2 stream of a `LupineFaultServer`: answers `ok`, or breaks the exchange as the plan
/// says. Resets and closes act on the whole connection (TCP), garbage is written under the HTTP/2
/// framing (`gate`), the rest on the stream.
final class FaultStreamResponder: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let plan: FaultPlan?
    private let gate: RawWriteGate
    private let connection: any Channel
    private var faultApplied = false
    private var timer: Scheduled<Void>?

    init(plan: FaultPlan?, gate: RawWriteGate, connection: any Channel) {
        self.plan = plan
        self.gate = gate
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            guard let plan, plan.phase == .requestBody else { return }
            switch plan.kind {
            case .silence:
                faultApplied = true
                // Nothing read: the stream's flow-control window closes on the client.
                context.channel.setOption(.autoRead, value: false).whenComplete { _ in }
            case .drip:
                faultApplied = true
                context.channel.setOption(.autoRead, value: false).whenComplete { _ in }
                readEvery100Milliseconds(context: context)
            case .oversized:
                faultApplied = true
                respond(status: .payloadTooLarge, body: "", context: context)
            case .reset, .close, .garbage:
                break
            }
        case .body:
            guard let plan, plan.phase == .requestBody, !faultApplied else { return }
            faultApplied = true
            breakConnection(plan.kind)
        case .end:
            guard let plan, !faultApplied else {
                if plan == nil || plan?.phase != .requestBody { respond(status: .ok, body: "ok", context: context) }
                return
            }
            switch plan.phase {
            case .responseHead: breakResponseHead(plan.kind, context: context)
            case .responseBody: breakResponseBody(plan.kind, context: context)
            default: respond(status: .ok, body: "ok", context: context)
            }
        }
    }

    private func readEvery100Milliseconds(context: ChannelHandlerContext) {
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(100)) {
            guard context.channel.isActive else { return }
            context.read()
            self.readEvery100Milliseconds(context: context)
        }
    }

    private func breakConnection(_ kind: FaultKind) {
        switch kind {
        case .reset: FaultPipeline.reset(connection)
        case .close: connection.close(promise: nil)
        // Under HTTP/2 framing, text: "HTT" read as a frame length is far over the largest frame.
        case .garbage: _ = gate.writeAndFlush(ByteBuffer(string: "HTTP/1.1 400 Bad Request\r\n\r\n"))
        case .silence, .oversized, .drip: break
        }
    }

    private func respond(status: HTTPResponseStatus, body: String, context: ChannelHandlerContext) {
        let head = HTTPResponseHead(version: .http2, status: status, headers: ["content-length": "\(body.utf8.count)"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !body.isEmpty { context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    private func breakResponseHead(_ kind: FaultKind, context: ChannelHandlerContext) {
        switch kind {
        case .silence, .drip:
            break
        case .reset, .close, .garbage:
            breakConnection(kind)
        case .oversized:
            let head = HTTPResponseHead(version: .http2, status: .ok,
                                        headers: ["x-big": String(repeating: "a", count: 128 * 1024), "content-length": "2"])
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "ok")))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }

    private func breakResponseBody(_ kind: FaultKind, context: ChannelHandlerContext) {
        let head = HTTPResponseHead(version: .http2, status: .ok, headers: ["content-length": "1048576"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(repeating: 0x78, count: 1024)))), promise: nil)
        switch kind {
        case .silence:
            break
        case .reset, .close, .garbage:
            breakConnection(kind)
        case .oversized:
            // More body than the announced length.
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(repeating: 0x78, count: 2 << 20)))), promise: nil)
        case .drip:
            dripBody(context: context)
        }
    }

    private func dripBody(context: ChannelHandlerContext) {
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(100)) {
            guard context.channel.isActive else { return }
            context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "x")))), promise: nil)
            self.dripBody(context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        context.fireChannelInactive()
    }
}

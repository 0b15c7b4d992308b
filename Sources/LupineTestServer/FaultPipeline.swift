import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Builds the pipeline of one connection of a `LupineFaultServer`.
enum FaultPipeline {
    static func configure(_ channel: any Channel, plan: FaultPlan, faulted: Bool, tlsContext: NIOSSLContext?, http2: Bool,
                          reuse: LupineFaultServer.Reuse, counters: LupineFaultServer.Counters) throws {
        let pipeline = channel.pipeline.syncOperations
        if faulted, plan.phase == .connect {
            try pipeline.addHandler(ConnectFaultHandler(kind: plan.kind))
            return
        }
        if faulted, plan.phase == .tlsHandshake, tlsContext != nil {
            if plan.kind == .drip, let tlsContext {
                // A real handshake, trickled out.
                try pipeline.addHandler(DripWriter(bytesPerTick: 16))
                try pipeline.addHandler(NIOSSLServerHandler(context: tlsContext))
            } else {
                try pipeline.addHandler(TLSHandshakeFaultHandler(kind: plan.kind))
            }
            return
        }
        let rawGate = RawWriteGate()
        if let tlsContext {
            try pipeline.addHandler(NIOSSLServerHandler(context: tlsContext))
        }
        try pipeline.addHandler(rawGate)
        let script = faulted ? plan : nil
        if http2, tlsContext != nil {
            // Stream channels run on their connection's event loop.
            let boundGate = NIOLoopBound(rawGate, eventLoop: channel.eventLoop)
            // A faulty server may send more body than it announced.
            var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
            connectionConfiguration.contentLengthValidation = .disabled
            _ = try pipeline.configureHTTP2Pipeline(mode: .server, connectionConfiguration: connectionConfiguration,
                                                    streamConfiguration: .init()) { stream in
                stream.eventLoop.makeCompletedFuture {
                    counters.requests.withLock { $0 += 1 }
                    try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                    try stream.pipeline.syncOperations.addHandler(FaultStreamResponder(plan: script, gate: boundGate.value,
                                                                                         connection: channel))
                }
            }
            return
        }
        try pipeline.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes)))
        try pipeline.addHandler(FaultHTTP1Handler(plan: script, reuse: reuse, counters: counters))
    }

    /// Closes `channel` with SO_LINGER 0: the peer sees a TCP reset.
    static func reset(_ channel: any Channel) {
        guard let provider = channel as? SocketOptionProvider else {
            channel.close(promise: nil)
            return
        }
        provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
    }

    /// Bytes that are no protocol at all.
    static let garbage = ByteBuffer(bytes: [0x00, 0x01, 0x02, 0xFF, 0xFE] + Array("garbage\r\n\r\n".utf8))
}

/// Faults a connection as soon as it is made.
final class ConnectFaultHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let kind: FaultKind

    init(kind: FaultKind) {
        self.kind = kind
    }

    func channelActive(context: ChannelHandlerContext) {
        switch kind {
        case .reset:
            FaultPipeline.reset(context.channel)
        case .close:
            context.close(promise: nil)
        case .garbage, .oversized:
            context.writeAndFlush(wrapOutboundOut(FaultPipeline.garbage), promise: nil)
        case .silence, .drip:
            break
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}

/// Faults a TLS handshake once the ClientHello arrived.
final class TLSHandshakeFaultHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let kind: FaultKind
    private var answered = false

    init(kind: FaultKind) {
        self.kind = kind
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answered else { return }
        answered = true
        switch kind {
        case .reset:
            FaultPipeline.reset(context.channel)
        case .close:
            context.close(promise: nil)
        case .garbage:
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")),
                                  promise: nil)
        case .oversized:
            // A handshake record announcing 65535 bytes: four times what TLS allows.
            var record = ByteBuffer(bytes: [0x16, 0x03, 0x03, 0xFF, 0xFF])
            record.writeRepeatingByte(0x02, count: 512)
            context.writeAndFlush(wrapOutboundOut(record), promise: nil)
        case .silence, .drip:
            break
        }
    }
}

/// Holds back what is written and lets it out `bytesPerTick` bytes every 100 ms.
final class DripWriter: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let bytesPerTick: Int
    private var pending = ByteBuffer()
    private var timer: Scheduled<Void>?

    init(bytesPerTick: Int) {
        self.bytesPerTick = bytesPerTick
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        var bytes = unwrapOutboundIn(data)
        pending.writeBuffer(&bytes)
        promise?.succeed()
        scheduleTick(context: context)
    }

    func flush(context: ChannelHandlerContext) {}

    private func scheduleTick(context: ChannelHandlerContext) {
        guard timer == nil else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(100)) {
            self.timer = nil
            guard context.channel.isActive, let slice = self.pending.readSlice(length: min(self.bytesPerTick, self.pending.readableBytes)) else { return }
            context.writeAndFlush(self.wrapOutboundOut(slice), promise: nil)
            if self.pending.readableBytes > 0 { self.scheduleTick(context: context) }
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
    }
}

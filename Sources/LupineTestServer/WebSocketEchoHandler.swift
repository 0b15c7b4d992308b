import NIOCore
import NIOWebSocket

/// Runs one upgraded `/websocket/echo` connection as its `WebSocketBehaviour` says: greetings,
/// a flood paced by the channel's writability, echoes (reassembled, re-sent in `fragments` frames), pings answered or ignored, a
/// server-initiated close or a dropped connection, and the answer to the client's close.
final class WebSocketEchoHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// Stalled connections are closed after this, like stalled HTTP exchanges.
    static let idleTimeout = TimeAmount.seconds(60)

    private let behaviour: WebSocketBehaviour
    private let requestHeaders: [String: String]
    private let floodLedger: WebSocketFloodLedger
    private var sentMessages = 0
    /// Flood messages written so far.
    private var floodSent = 0
    /// `continueFlood` is running: a writability change during its own flush must not re-enter it.
    private var isFlooding = false
    private var pendingOpcode: WebSocketOpcode?
    private var pendingPayload = ByteBuffer()
    private var closeSent = false
    private var pingsReceived = 0
    private var timer: Scheduled<Void>?

    init(behaviour: WebSocketBehaviour, requestHeaders: [String: String], floodLedger: WebSocketFloodLedger) {
        self.behaviour = behaviour
        self.requestHeaders = requestHeaders
        self.floodLedger = floodLedger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        armIdleTimer(context: context)
        if let name = behaviour.greetingHeader {
            sendMessage(.text, ByteBuffer(string: requestHeaders[name.lowercased()] ?? ""), context: context)
        }
        for index in 0..<behaviour.greetingCount where !closeSent && context.channel.isActive {
            sendMessage(.text, ByteBuffer(string: "message \(index + 1)"), context: context)
        }
        if behaviour.oversizedBytes > 0, !closeSent {
            sendMessage(.binary, ByteBuffer(repeating: UInt8(ascii: "x"), count: behaviour.oversizedBytes), context: context)
        }
        if behaviour.closeAfter == 0 { startClose(context: context) }
        continueFlood(context: context)
    }

    /// Writes flood messages while the channel is writable; `channelWritabilityChanged` calls it
    /// again once the client has read enough for the channel to take more.
    private func continueFlood(context: ChannelHandlerContext) {
        guard !isFlooding, floodSent < behaviour.floodCount else { return }
        isFlooding = true
        defer { isFlooding = false }
        while floodSent < behaviour.floodCount, !closeSent, context.channel.isActive {
            guard context.channel.isWritable else {
                floodLedger.recordUnwritable()
                return
            }
            floodSent += 1
            var payload = context.channel.allocator.buffer(capacity: behaviour.floodMessageSize)
            payload.writeInteger(UInt64(floodSent))
            payload.writeRepeatingByte(UInt8(truncatingIfNeeded: floodSent), count: behaviour.floodMessageSize - 8)
            // Recorded before the write: a client may see the message (and the close after the
            // last one) before this call returns.
            floodLedger.recordWritten()
            if floodSent == behaviour.floodCount { floodLedger.recordFinished() }
            sendMessage(.binary, payload, context: context)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { continueFlood(context: context) }
        context.fireChannelWritabilityChanged()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        armIdleTimer(context: context)
        switch frame.opcode {
        case .text, .binary:
            pendingOpcode = frame.opcode
            pendingPayload = frame.unmaskedData
            if frame.fin { echoPendingMessage(context: context) }
        case .continuation:
            var part = frame.unmaskedData
            pendingPayload.writeBuffer(&part)
            if frame.fin { echoPendingMessage(context: context) }
        case .ping:
            pingsReceived += 1
            guard !behaviour.ignoresPings, !closeSent else { return }
            write(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData), context: context)
        case .connectionClose:
            receiveClose(frame, context: context)
        default:
            break
        }
    }

    private func echoPendingMessage(context: ChannelHandlerContext) {
        guard let opcode = pendingOpcode, !closeSent else { return }
        pendingOpcode = nil
        if opcode == .text, String(buffer: pendingPayload) == "ping-count" {
            sendMessage(.text, ByteBuffer(string: "pings: \(pingsReceived)"), context: context)
            return
        }
        sendMessage(opcode, pendingPayload, context: context)
    }

    /// Sends one message in `behaviour.fragments` frames, then closes or drops when it is time.
    private func sendMessage(_ opcode: WebSocketOpcode, _ payload: ByteBuffer, context: ChannelHandlerContext) {
        var remaining = payload
        let fragmentSize = max(1, (payload.readableBytes + behaviour.fragments - 1) / behaviour.fragments)
        var first = true
        var lastWrite: EventLoopFuture<Void>?
        repeat {
            let size = min(fragmentSize, remaining.readableBytes)
            let part = remaining.readSlice(length: size) ?? ByteBuffer()
            let frame = WebSocketFrame(fin: remaining.readableBytes == 0, opcode: first ? opcode : .continuation, data: part)
            lastWrite = context.write(wrapOutboundOut(frame))
            first = false
        } while remaining.readableBytes > 0
        context.flush()
        sentMessages += 1
        if behaviour.dropAfter == sentMessages {
            closeSent = true
            // Once the message is on the wire: closing at once could discard it.
            lastWrite?.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        } else if behaviour.closeAfter == sentMessages {
            startClose(context: context)
        }
    }

    private func startClose(context: ChannelHandlerContext) {
        guard !closeSent else { return }
        closeSent = true
        var payload = ByteBuffer()
        payload.writeInteger(behaviour.closeCode)
        payload.writeString(behaviour.closeReason)
        write(WebSocketFrame(fin: true, opcode: .connectionClose, data: payload), context: context)
    }

    private func receiveClose(_ frame: WebSocketFrame, context: ChannelHandlerContext) {
        guard !closeSent else {
            // The client answered our close.
            context.close(promise: nil)
            return
        }
        closeSent = true
        // Echo the client's code (without its reason), then end the connection.
        var payload = frame.unmaskedData
        let reply = payload.readSlice(length: min(2, payload.readableBytes)) ?? ByteBuffer()
        let closeFrame = WebSocketFrame(fin: true, opcode: .connectionClose, data: reply)
        context.writeAndFlush(wrapOutboundOut(closeFrame)).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    private func write(_ frame: WebSocketFrame, context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
    }

    private func armIdleTimer(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.idleTimeout) {
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

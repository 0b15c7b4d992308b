import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import NIOWebSocket

/// Runs an open WebSocket connection on its event loop: reassembles messages, answers pings,
/// matches pongs, sends automatic pings, and performs the close handshake (RFC 6455 sections 5
/// and 7).
///
/// Incoming messages are read as the consumer takes them: while the request's read demand is
/// paused (its handlers or async streams are behind, or it is suspended), socket reads are held
/// back and frames already read wait in a `WebSocketReadGate`. Pings and pongs already read are
/// still answered and matched at once; those the server sends after the pause wait in the socket
/// with its messages, and are answered once the consumer catches up. This is what a NIO channel
/// whose reads are held back does: a server that closes connections whose pings go unanswered for
/// a while (commonly tens of seconds) may close a consumer that stays behind that long.
///
/// Every frame a client sends is masked. A server frame that is masked, uses a reserved bit (no
/// extension is negotiated) or an unknown opcode fails the connection with 1002; an invalid
/// UTF-8 text message with 1007; a message over the size limit with 1009.
final class WebSocketFrameHandler: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private enum Phase {
        case open
        /// We sent a close frame and wait for the server's.
        case closing(WebSocketClosePayload)
        /// The close handshake is over (or the connection failed); the channel is closing.
        case closed
    }

    private let connection: WebSocketConnection
    private let settings: WebSocketConnection.Settings
    private var assembler: WebSocketMessageAssembler
    private var readGate = WebSocketReadGate<WebSocketFrame>()
    private var phase = Phase.open
    /// A close frame was exchanged: the connection ends without an error.
    private var closedCleanly = false
    private var context: ChannelHandlerContext?
    private var nextPingID: UInt64 = 0
    private var pendingPings: [(id: UInt64, completion: @Sendable (Result<Void, URLError>) -> Void)] = []
    /// When the unanswered automatic ping was sent, if one is.
    private var automaticPingSentAt: NIODeadline?
    /// The shortest time a pong is waited for, whatever the ping interval: a busy machine may take
    /// longer than a very short interval to answer, and the connection must not be failed for it.
    static let minimumPongTimeout = TimeAmount.seconds(1)
    private var pingTimer: Scheduled<Void>?
    private var closeTimer: Scheduled<Void>?

    init(connection: WebSocketConnection, settings: WebSocketConnection.Settings) {
        self.connection = connection
        self.settings = settings
        self.assembler = WebSocketMessageAssembler(maximumMessageSize: settings.maximumMessageSize)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        scheduleAutomaticPing()
    }

    // MARK: Reading as the consumer takes messages

    /// Whether frames and socket reads wait now: the request's consumer is behind. Only while
    /// open: once closing, data frames are dropped anyway, and the server's close must be read.
    private var consumerIsBehind: Bool {
        guard case .open = phase else { return false }
        return connection.holdsDelivery()
    }

    func read(context: ChannelHandlerContext) {
        if readGate.readRequested(paused: consumerIsBehind) { context.read() }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        // Any frame shows the server alive: the wait for an automatic ping's pong starts again. Its
        // pong may sit behind megabytes of messages the consumer is still taking.
        if automaticPingSentAt != nil { automaticPingSentAt = .now() }
        let order: WebSocketReadGate<WebSocketFrame>.Order = frame.opcode == .ping || frame.opcode == .pong ? .answeredAtOnce : .keepsItsPlace
        if readGate.frameArrived(frame, order: order, paused: consumerIsBehind) { process(frame) }
    }

    /// The consumer caught up (a resume from the request's read demand), or the connection stopped
    /// holding frames: held frames are processed in order while it keeps up, then the socket read
    /// NIO asked for meanwhile goes out.
    func resumeDelivery() {
        while let frame = readGate.nextHeldFrame(paused: consumerIsBehind) { process(frame) }
        if readGate.releasesHeldRead(paused: consumerIsBehind) { context?.read() }
    }

    /// Processes every held frame, paused or not: what was read before the connection ended or
    /// failed reaches the consumer before the end does.
    private func processHeldFrames() {
        while let frame = readGate.nextHeldFrame(paused: false) { process(frame) }
    }

    // MARK: Receiving

    private func process(_ frame: WebSocketFrame) {
        guard frame.maskKey == nil, !frame.rsv1, !frame.rsv2, !frame.rsv3 else {
            fail(.protocolError, connection.failure(.badServerResponse, "The server sent a masked or extended WebSocket frame."))
            return
        }
        switch frame.opcode {
        case .text: receive(.text, frame)
        case .binary: receive(.binary, frame)
        case .continuation: receive(.continuation, frame)
        case .ping: answerPing(frame)
        case .pong: matchPong(frame)
        case .connectionClose: receiveClose(frame)
        default:
            fail(.protocolError, connection.failure(.badServerResponse, "The server sent an unknown WebSocket opcode."))
        }
    }

    private func receive(_ kind: WebSocketMessageAssembler.FrameKind, _ frame: WebSocketFrame) {
        guard case .open = phase else { return }
        switch assembler.receive(kind, isFinal: frame.fin, payload: Data(frame.data.readableBytesView)) {
        case let .message(message):
            connection.didReceive(message: message)
        case .incomplete:
            break
        case .failure(.messageTooBig):
            fail(.messageTooBig, connection.failure(.dataLengthExceedsMaximum,
                                                    "A WebSocket message exceeds maximumMessageSize (\(settings.maximumMessageSize) bytes)."))
        case let .failure(code):
            fail(code, connection.failure(.cannotParseResponse, "The server sent an invalid WebSocket message."))
        }
    }

    private func answerPing(_ frame: WebSocketFrame) {
        guard case .open = phase else { return }
        write(.pong, payload: frame.data)
    }

    private func matchPong(_ frame: WebSocketFrame) {
        var payload = frame.data
        // A pong answers the ping with its payload and, as pongs may be coalesced, every earlier one.
        guard payload.readableBytes == 8, let id = payload.readInteger(as: UInt64.self) else { return }
        let answered = pendingPings.filter { $0.id <= id }
        pendingPings.removeAll { $0.id <= id }
        answered.forEach { $0.completion(.success(())) }
    }

    private func receiveClose(_ frame: WebSocketFrame) {
        guard let payload = WebSocketClosePayload(parsing: Data(frame.data.readableBytesView)) else {
            fail(.protocolError, connection.failure(.badServerResponse, "The server sent a malformed WebSocket close frame."))
            return
        }
        switch phase {
        case .open:
            // The server closes: echo its code, then end the connection.
            phase = .closed
            closedCleanly = true
            connection.didClose(with: payload)
            writeClose(WebSocketClosePayload(rawCode: payload.rawCode, reason: nil)) { $0.close(promise: nil) }
        case .closing:
            phase = .closed
            closedCleanly = true
            connection.didClose(with: payload)
            context?.close(promise: nil)
        case .closed:
            break
        }
    }

    // MARK: Sending

    func send(_ message: URLSessionWebSocketTask.Message, completion: @escaping @Sendable (Result<Void, URLError>) -> Void) {
        guard case .open = phase, let context else {
            completion(.failure(connection.failure(.networkConnectionLost, "The WebSocket connection is closing.")))
            return
        }
        let frame: WebSocketFrame
        switch message {
        case let .string(text):
            frame = maskedFrame(.text, payload: context.channel.allocator.buffer(string: text))
        case let .data(data):
            frame = maskedFrame(.binary, payload: context.channel.allocator.buffer(bytes: data))
        @unknown default:
            completion(.failure(connection.failure(.cannotParseResponse, "Unknown WebSocket message kind.")))
            return
        }
        let connection = connection
        context.writeAndFlush(wrapOutboundOut(frame)).assumeIsolated().whenComplete { result in
            switch result {
            case .success: completion(.success(()))
            case let .failure(error): completion(.failure(EngineErrors.urlError(for: error, url: connection.request.url, authority: connection.authority)))
            }
        }
    }

    func sendPing(completion: @escaping @Sendable (Result<Void, URLError>) -> Void) {
        guard case .open = phase, let context else {
            completion(.failure(connection.failure(.networkConnectionLost, "The WebSocket connection is closing.")))
            return
        }
        nextPingID += 1
        pendingPings.append((nextPingID, completion))
        var payload = context.channel.allocator.buffer(capacity: 8)
        payload.writeInteger(nextPingID)
        write(.ping, payload: payload)
    }

    /// Starts the close handshake; the connection closes when the server answers, or after the
    /// close timeout.
    func close(sending payload: WebSocketClosePayload) {
        guard case .open = phase, let context else {
            context?.close(promise: nil)
            return
        }
        phase = .closing(payload)
        writeClose(payload) { _ in }
        // The server's close may be held, or still in the socket.
        resumeDelivery()
        let timeout = TimeAmount.nanoseconds(Int64(settings.closeTimeout * 1_000_000_000))
        closeTimer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            guard case let .closing(sent) = self.phase else { return }
            // No answer: the close is reported with the code we sent.
            self.phase = .closed
            self.closedCleanly = true
            self.connection.didClose(with: sent)
            context.close(promise: nil)
        }
    }

    /// Drops the connection without a close handshake (`cancel()`).
    func abort() {
        phase = .closed
        context?.close(promise: nil)
    }

    // MARK: Automatic pings

    private func scheduleAutomaticPing() {
        guard let interval = settings.pingInterval, interval > 0, let context else { return }
        let delay = TimeAmount.nanoseconds(Int64(interval * 1_000_000_000))
        pingTimer = context.eventLoop.assumeIsolated().scheduleTask(in: delay) {
            self.automaticPingIsDue()
        }
    }

    private func automaticPingIsDue() {
        guard case .open = phase, let context, let interval = settings.pingInterval else { return }
        if automaticPingSentAt != nil, readGate.isReadHeld || readGate.heldFrameCount > 0 || connection.isReadingPaused {
            // The pong may be waiting in the socket until the consumer catches up: the wait for it
            // starts again, as a server is not quiet while the client is not reading.
            automaticPingSentAt = .now()
        } else if let sentAt = automaticPingSentAt {
            let timeout = max(TimeAmount.nanoseconds(Int64(interval * 1_000_000_000)), Self.minimumPongTimeout)
            if NIODeadline.now() - sentAt >= timeout {
                // The last ping went unanswered for too long: the server is gone.
                connection.record(connection.failure(.networkConnectionLost,
                                                     "The WebSocket server did not answer a ping in time."))
                phase = .closed
                context.close(promise: nil)
                return
            }
        } else {
            automaticPingSentAt = .now()
            // Ping completions run on the event loop (they come from `channelRead` or `channelInactive`).
            let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
            sendPing { result in
                if case .success = result { handler.value.automaticPingSentAt = nil }
            }
        }
        scheduleAutomaticPing()
    }

    // MARK: Failing and ending

    /// Fails the connection: sends a close frame with `code`, reports it, and closes.
    private func fail(_ code: URLSessionWebSocketTask.CloseCode, _ error: URLError) {
        connection.record(error)
        guard case .open = phase else {
            context?.close(promise: nil)
            return
        }
        phase = .closed
        let payload = WebSocketClosePayload(sending: code, reason: nil)
        connection.didClose(with: payload)
        writeClose(payload) { $0.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        processHeldFrames()
        switch error {
        case NIOWebSocketError.invalidFrameLength:
            fail(.messageTooBig, connection.failure(.dataLengthExceedsMaximum,
                                                    "A WebSocket frame exceeds maximumMessageSize (\(settings.maximumMessageSize) bytes)."))
        case is NIOWebSocketError:
            fail(.protocolError, connection.failure(.badServerResponse, "The server at \(connection.authority) broke the WebSocket protocol."))
        default:
            connection.record(error)
            phase = .closed
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        processHeldFrames()
        connectionDidEnd()
        context.fireChannelInactive()
    }

    /// The connection is gone: pending pings fail, timers stop, and the exchange completes (once).
    func connectionDidEnd() {
        pingTimer?.cancel()
        closeTimer?.cancel()
        context = nil
        phase = .closed
        let error = closedCleanly ? nil : connection.failure(.networkConnectionLost)
        let unanswered = pendingPings
        pendingPings.removeAll()
        unanswered.forEach { $0.completion(.failure(error ?? connection.failure(.networkConnectionLost))) }
        connection.complete(error: error)
    }

    // MARK: Frames

    private func maskedFrame(_ opcode: WebSocketOpcode, payload: ByteBuffer) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: opcode, maskKey: .random(), data: payload)
    }

    private func write(_ opcode: WebSocketOpcode, payload: ByteBuffer) {
        context?.writeAndFlush(wrapOutboundOut(maskedFrame(opcode, payload: payload)), promise: nil)
    }

    private func writeClose(_ payload: WebSocketClosePayload, then: @escaping (ChannelHandlerContext) -> Void) {
        guard let context else { return }
        let frame = maskedFrame(.connectionClose, payload: context.channel.allocator.buffer(bytes: payload.bytes))
        context.writeAndFlush(wrapOutboundOut(frame)).assumeIsolated().whenComplete { _ in then(context) }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import NIOHTTP1
import NIOSSL
import NIOTLS

/// The last handler of a `TLSConnection`'s pipeline: it reports the TLS handshake, and drives
/// the connection's current `TLSExchange` through the `TransportEvents` contract (sent bytes,
/// head, body parts with backpressure, exactly one completion), with its idle timeout and deadline.
///
/// Backpressure: while the consumer has paused, `read` calls are held back here (the socket is
/// not read) and parts already decoded wait in `buffered`.
final class TLSConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    private let handshake: EventLoopPromise<Void>
    private let trustCheck: ServerTrustCheck
    private let url: URL
    private var context: ChannelHandlerContext?
    /// Called after a complete exchange on a connection that may be reused.
    var onReusable: (() -> Void)?

    private var current: TLSExchange?
    private var responseHead: HTTPResponseHead?
    private var skippingInformational = false
    private var requestFullySent = false
    private var isPaused = false
    private var heldRead = false
    private var buffered: CircularBuffer<HTTPClientResponsePart> = []
    private var bytesSent: Int64 = 0
    private var lastActivity = NIODeadline.now()
    private var idleCheck: Scheduled<Void>?
    private var deadlineCheck: Scheduled<Void>?

    init(handshake: EventLoopPromise<Void>, trustCheck: ServerTrustCheck, url: URL) {
        self.handshake = handshake
        self.trustCheck = trustCheck
        self.url = url
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        // The closure holds the connection, which holds this handler.
        onReusable = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted? = event as? TLSUserEvent { handshake.succeed() }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        handshake.fail(error)
        if let current { fail(current, with: trustCheck.urlError(for: error, url: current.request.url)) }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        handshake.fail(ChannelError.eof)
        if let current { fail(current, with: current.failure(.networkConnectionLost)) }
        context.fireChannelInactive()
    }

    func read(context: ChannelHandlerContext) {
        if isPaused {
            heldRead = true
        } else {
            context.read()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        guard current != nil else { return }
        lastActivity = .now()
        if isPaused {
            buffered.append(part)
        } else {
            deliver(part)
        }
    }

    // MARK: Exchange

    /// Starts `exchange` on this (idle) connection.
    func start(_ exchange: TLSExchange) {
        guard let context, context.channel.isActive else {
            exchange.complete(error: exchange.failure(.networkConnectionLost))
            return
        }
        current = exchange
        (responseHead, skippingInformational, requestFullySent, bytesSent) = (nil, false, false, 0)
        // A pause asked for before the exchange reached its connection holds from the start.
        (isPaused, heldRead) = (exchange.wantsPause, false)
        buffered.removeAll()
        lastActivity = .now()
        let request = exchange.request
        let idleTimeout = TimeAmount.nanoseconds(Int64(max(request.idleTimeout, 0.001) * 1_000_000_000))
        scheduleIdleCheck(for: exchange, timeout: idleTimeout, at: .now() + idleTimeout)
        if let deadline = request.deadline {
            let remaining = TimeAmount.nanoseconds(Int64(max(0, deadline.timeIntervalSinceNow) * 1_000_000_000))
            deadlineCheck = context.eventLoop.assumeIsolated().scheduleTask(in: remaining) { [weak self] in
                self?.fail(exchange, with: exchange.failure(.timedOut))
            }
        }
        context.write(wrapOutboundOut(.head(TLSRequestHead.make(for: request))), promise: nil)
        switch request.body {
        case nil:
            writeEnd(for: exchange)
        case let .data(data):
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: data)))), promise: nil)
            bytesSent = Int64(data.count)
            writeEnd(for: exchange)
        case let .file(fileURL):
            context.flush()
            let reader = FileChunkReader(url: fileURL)
            pumpBody(for: exchange, length: request.body?.knownLength) { try reader.next() }
        case let .stream(length, nextChunk):
            context.flush()
            pumpBody(for: exchange, length: length, nextChunk: nextChunk)
        }
        context.read()
    }

    private func writeEnd(for exchange: TLSExchange) {
        guard let context else { return }
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: promise)
        promise.futureResult.assumeIsolated().whenSuccess { [weak self] in
            guard let self, self.current === exchange else { return }
            self.requestFullySent = true
            self.lastActivity = .now()
            if self.bytesSent > 0 {
                exchange.events.transportDidSendBodyBytes(exchange, totalBytesSent: self.bytesSent,
                                                          totalBytesExpectedToSend: exchange.request.body?.knownLength)
            }
            exchange.events.transportDidSendRequest(exchange)
        }
    }

    /// Writes a streamed body chunk by chunk, each write waiting for the previous one.
    private func pumpBody(for exchange: TLSExchange, length: Int64?, nextChunk: @escaping @Sendable () async throws -> Data?) {
        guard let context else { return }
        let loop = context.eventLoop
        let bound = NIOLoopBound(self, eventLoop: loop)
        Task {
            do {
                while let chunk = try await nextChunk() {
                    if chunk.isEmpty { continue }
                    try await loop.flatSubmit { bound.value.writeBodyChunk(chunk, for: exchange) }.get()
                }
                loop.execute { bound.value.writeEnd(for: exchange) }
            } catch {
                loop.execute {
                    bound.value.fail(exchange, with: TransportErrorMapping.urlError(for: error, url: exchange.request.url))
                }
            }
        }
    }

    private func writeBodyChunk(_ chunk: Data, for exchange: TLSExchange) -> EventLoopFuture<Void> {
        guard let context, current === exchange else { return eventLoopFailure(CancellationError()) }
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: chunk)))), promise: promise)
        return promise.futureResult.assumeIsolated().map { [weak self] in
            guard let self, self.current === exchange else { return }
            self.bytesSent += Int64(chunk.count)
            self.lastActivity = .now()
            exchange.events.transportDidSendBodyBytes(exchange, totalBytesSent: self.bytesSent,
                                                      totalBytesExpectedToSend: exchange.request.body?.knownLength)
        }.nonisolated()
    }

    private func eventLoopFailure(_ error: any Error) -> EventLoopFuture<Void> {
        (context?.eventLoop ?? handshake.futureResult.eventLoop).makeFailedFuture(error)
    }

    private func deliver(_ part: HTTPClientResponsePart) {
        guard let exchange = current else { return }
        switch part {
        case let .head(head):
            // 1xx answers other than 101 precede the real response.
            if head.status.code >= 100, head.status.code < 200, head.status.code != 101 {
                skippingInformational = true
                return
            }
            responseHead = head
            let transportHead = TransportResponseHead(statusCode: Int(head.status.code),
                                                      httpVersion: "HTTP/\(head.version.major).\(head.version.minor)",
                                                      headerFields: head.headers.map { HTTPHeader(name: $0.name, value: $0.value) })
            exchange.events.transportDidReceive(exchange, head: transportHead)
        case let .body(buffer):
            exchange.events.transportDidReceive(exchange, bodyPart: Data(buffer.readableBytesView))
        case .end:
            if skippingInformational {
                skippingInformational = false
                return
            }
            finish(exchange)
        }
    }

    /// The consumer paused or resumed reading: this follows what it asks for now (so that calls
    /// reaching the loop by different routes cannot leave the wrong state behind).
    func applyReadDemand(_ exchange: TLSExchange) {
        guard current === exchange else { return }
        if exchange.wantsPause {
            isPaused = true
            return
        }
        guard isPaused else { return }
        isPaused = false
        lastActivity = .now()
        while !isPaused, current === exchange, let part = buffered.popFirst() {
            deliver(part)
        }
        if !isPaused, heldRead, let context {
            heldRead = false
            context.read()
        }
    }

    private func finish(_ exchange: TLSExchange) {
        let reusable = requestFullySent && (responseHead?.isKeepAlive ?? false)
        endExchange()
        if reusable, let onReusable {
            onReusable()
        } else {
            context?.close(promise: nil)
        }
        exchange.complete(error: nil)
    }

    /// Ends `exchange` with `error` (cancel, timeout, connection failure); the connection closes.
    func fail(_ exchange: TLSExchange, with error: URLError) {
        guard current === exchange else {
            exchange.complete(error: error)
            return
        }
        endExchange()
        context?.close(promise: nil)
        exchange.complete(error: error)
    }

    private func endExchange() {
        current = nil
        idleCheck?.cancel()
        deadlineCheck?.cancel()
        (idleCheck, deadlineCheck) = (nil, nil)
        buffered.removeAll()
        isPaused = false
    }

    private func scheduleIdleCheck(for exchange: TLSExchange, timeout: TimeAmount, at deadline: NIODeadline) {
        guard let context else { return }
        idleCheck = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
            guard let self, self.current === exchange else { return }
            let now = NIODeadline.now()
            // A body paused by its consumer is not a quiet server: the clock restarts on resume.
            if self.isPaused {
                self.scheduleIdleCheck(for: exchange, timeout: timeout, at: now + timeout)
            } else if self.lastActivity + timeout > now {
                self.scheduleIdleCheck(for: exchange, timeout: timeout, at: self.lastActivity + timeout)
            } else {
                self.fail(exchange, with: exchange.failure(.timedOut))
            }
        }
    }
}

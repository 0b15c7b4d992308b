import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// What an `ExchangeHandler` serves: a kept-alive HTTP/1.1 connection or one HTTP/2 stream.
/// Called on the event loop.
protocol ExchangeHandlerOwner: AnyObject {
    /// The exchange ended with its whole response; `reusable` says whether another exchange may
    /// follow on the same connection. Called before the exchange reports its completion, so that
    /// the next request already finds the connection free.
    func exchangeHandlerDidFinish(_ handler: ExchangeHandler, reusable: Bool)

    /// The server switched protocols for the exchange of `handler`: the connection leaves the
    /// pool and `upgrade`'s handlers replace the HTTP ones, `handler` included. `switched` runs on
    /// the event loop once they are in place, with false if that failed (the connection closes).
    func exchangeHandler(_ handler: ExchangeHandler, switchesTo upgrade: any ProtocolUpgrade,
                         switched: @escaping (Bool) -> Void)

    /// The server sent bytes on a connection that never carried an exchange, before any request.
    /// True when the connection is already promised to an exchange (leased from the pool, or not
    /// in it yet): the handler keeps the fault and fails that exchange with it. False when nobody
    /// is to use the connection (it was idle in the pool and has been taken out): it closes.
    func exchangeHandlerKeepsUnsolicitedInput(_ handler: ExchangeHandler) -> Bool

    /// Whether `error`, which ended the exchange of `handler` before any response byte, says
    /// the server did not process the request (an HTTP/2 stream refused by RST_STREAM or GOAWAY):
    /// it may then be sent again whatever its method.
    func exchangeHandlerRequestWasUnprocessed(_ handler: ExchangeHandler, error: any Error) -> Bool
}

/// Drives one exchange at a time through the `TransportEvents` contract, on an HTTP/1.1
/// connection (one exchange after another) or on an HTTP/2 stream (one exchange): it writes the
/// request head and streams the body with backpressure, delivers the response head and body
/// parts, holds socket reads while the consumer has paused reading, and enforces the idle gap
/// and the resource deadline.
///
/// Parts decoded while reading is paused wait in `held`, and the socket is not read again
/// (`read` is held back), so backpressure reaches the server.
final class ExchangeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    weak var owner: (any ExchangeHandlerOwner)?
    private let clock: any EngineClock
    private var context: ChannelHandlerContext?
    /// This handler, bound to its event loop, as exchanges and tasks hold it.
    private(set) var bound: NIOLoopBound<ExchangeHandler>?

    // The current exchange and what it has seen so far.
    private(set) var exchange: EngineExchange?
    private var sawResponseBytes = false
    private var isInformational = false
    /// The server's 101 to an upgrade exchange, switched to once its end arrives.
    private var switchingHead: HTTPResponseHead?
    /// The response ended in the read being handled: the exchange finishes once that read is done
    /// (`channelReadComplete`), so that bytes the server sent past the response in the same read
    /// close the connection instead of being taken for the next exchange's response.
    private var endPending = false
    /// `deliver` runs for a part just read (not one held for a paused consumer).
    private var deliveringRead = false
    private var responseKeepsAlive = true
    private var requestWantsClose = false
    private var requestSent = false
    private var bytesSent: Int64 = 0
    /// The request body's length when known, read once (a file's is a `stat`).
    private var expectedBodyBytes: Int64?
    private var onReusedConnection = false
    private var lastActivity = NIODeadline.uptimeNanoseconds(0)
    /// A `ReadActivityObserver` reports the bytes read (HTTP/1.1): each part read does not note
    /// activity itself. On an HTTP/2 stream, each frame does.
    private var observesBytes = false
    private var idleTimeout = TimeAmount.seconds(60)
    /// The timers of the idle gap and of the resource deadline. Each serves many exchanges: a
    /// timer that fires early re-arms itself for what remains.
    private var idleTimer = DueTimer()
    private var deadlineTimer = DueTimer()
    /// The current exchange's resource deadline.
    private var exchangeDeadline: NIODeadline?
    private var held = CircularBuffer<HTTPClientResponsePart>()
    private var heldRead = false
    private var bodyTask: Task<Void, Never>?
    /// The flow control of a streamed request body.
    private var bodyStream: RequestBodyStream?
    /// The body length the request head declares with `Content-Length` (a body not sent chunked):
    /// the bytes sent must match it, or the server would read the rest as another request.
    private var declaredBodyLength: Int64?
    /// The connection ended while a complete response was still held for a paused consumer.
    private var channelEnded = false
    /// Exchanges started on this connection or stream.
    private(set) var startedExchanges = 0
    /// The server sent bytes before the first request of a connection promised to an exchange
    /// (see `ExchangeHandlerOwner.exchangeHandlerKeepsUnsolicitedInput`): they answer no request,
    /// so that exchange fails with `badServerResponse` as soon as it starts, whichever came first
    /// on the event loop, the bytes or the exchange.
    private(set) var serverSpokeFirst = false
    /// Largest decoded/received ratio of an encoded body.
    private let decompressionRatioLimit: Int
    /// Decodes the current response's body when it names codings Lupine decodes.
    private var bodyDecoder: ResponseBodyDecoder?
    /// The `Host` value of the connection's key, made for its first exchange, not for each.
    private var knownHostField: (key: ConnectionKey, value: String)?

    /// - Parameter decompressionRatioLimit: Largest decoded/received ratio of an encoded response
    ///   body (the engine configuration's, 200 by default).
    init(clock: any EngineClock, decompressionRatioLimit: Int = 200) {
        self.clock = clock
        self.decompressionRatioLimit = decompressionRatioLimit
    }

    // MARK: Channel events

    /// Bytes arrived on the connection (from its `ReadActivityObserver`): the idle gap restarts.
    func bytesArrived() {
        observesBytes = true
        if exchange != nil { lastActivity = clock.now }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        bound = NIOLoopBound(self, eventLoop: context.eventLoop)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        idleTimer.cancel()
        deadlineTimer.cancel()
        // The handler holds itself through `bound`: let go, or every connection's handler leaks.
        bound = nil
    }

    func read(context: ChannelHandlerContext) {
        if let exchange, !held.isEmpty || exchange.holdsDelivery() {
            heldRead = true
        } else {
            context.read()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        guard let exchange else {
            unsolicitedInput(context: context)
            return
        }
        if endPending {
            // Past the end of the response: the connection is not reused.
            responseKeepsAlive = false
            return
        }
        if !observesBytes { lastActivity = clock.now }
        if !held.isEmpty || exchange.holdsDelivery() {
            held.append(part)
        } else {
            deliveringRead = true
            deliver(part, of: exchange)
            deliveringRead = false
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if endPending, let exchange {
            endPending = false
            finish(exchange)
        }
        context.fireChannelReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        bodyStream?.writabilityChanged(context.channel.isWritable)
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if exchange == nil, Self.isMalformedResponse(error) {
            // Bytes that are no HTTP response, with no exchange to answer.
            unsolicitedInput(context: context)
            return
        }
        if endPending, let exchange {
            // The response was whole; what came after it is not.
            endPending = false
            responseKeepsAlive = false
            finish(exchange)
        } else if let exchange, !heldResponseIsComplete {
            connectionFailed(exchange, error: error)
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if endPending, let exchange {
            endPending = false
            finish(exchange)
        } else if let exchange {
            if heldResponseIsComplete {
                // Delivered when the consumer resumes; the connection is not reused.
                channelEnded = true
            } else {
                connectionFailed(exchange, error: ChannelError.eof)
            }
        }
        context.fireChannelInactive()
    }

    /// Bytes with no exchange to answer are not a response to anything: a connection that sent
    /// them cannot be trusted with a request. An idle connection closes; a new one already promised
    /// to an exchange keeps the fault for it, so that the exchange fails the same way whether the
    /// bytes were read before or after it started.
    private func unsolicitedInput(context: ChannelHandlerContext) {
        if serverSpokeFirst { return }
        if startedExchanges == 0, let owner, owner.exchangeHandlerKeepsUnsolicitedInput(self) {
            serverSpokeFirst = true
        } else {
            context.close(promise: nil)
        }
    }

    /// Whether `error` is the HTTP decoder refusing what the server sent.
    private static func isMalformedResponse(_ error: any Error) -> Bool {
        error is HTTPParserError || error is NIOHTTPDecoderError
    }

    private var heldResponseIsComplete: Bool {
        held.contains { if case .end = $0 { true } else { false } }
    }

    // MARK: Starting

    /// Runs `exchange` here. `reused` says whether the connection carried exchanges before, which
    /// allows one retry on a new connection if it proves dead before any response byte.
    func start(_ exchange: EngineExchange, reused: Bool) {
        if serverSpokeFirst {
            // Whatever became of the connection since, the server's first bytes were the fault.
            context?.close(promise: nil)
            exchange.finish(error: exchange.failure(.badServerResponse,
                                                    "The server at \(exchange.key.authority) sent bytes that are not an HTTP response "
                                                        + "before the request; the request was not sent."))
            return
        }
        guard let context, let bound, context.channel.isActive, self.exchange == nil else {
            // The connection died between the pool's choice and now.
            if reused, exchange.bodyIsReplayable, exchange.prepareRetry() {
                exchange.pool.retry(exchange)
            } else {
                exchange.finish(error: exchange.failure(.networkConnectionLost))
            }
            return
        }
        guard exchange.attach(to: bound) else {
            // Cancelled or timed out while the connection was being handed over.
            owner?.exchangeHandlerDidFinish(self, reusable: true)
            return
        }
        startedExchanges += 1
        self.exchange = exchange
        sawResponseBytes = false
        isInformational = false
        switchingHead = nil
        endPending = false
        responseKeepsAlive = true
        requestSent = false
        bytesSent = 0
        expectedBodyBytes = exchange.request.body?.knownLength
        onReusedConnection = reused
        channelEnded = false
        let request = exchange.request
        let now = clock.now
        lastActivity = now
        idleTimeout = .lupineSeconds(request.idleTimeout)
        armIdleTimer(by: now + idleTimeout)
        exchangeDeadline = request.deadline.map { now + .lupineSeconds($0.timeIntervalSinceNow) }
        if let exchangeDeadline { armDeadlineTimer(by: exchangeDeadline) }
        let head = RequestHead.make(for: request, key: exchange.key, hostField: hostField(for: exchange.key), upgrade: exchange.upgrade)
        requestWantsClose = head.headers[canonicalForm: "connection"].contains { $0.lupineEqualsIgnoringASCIICase("close") }
        declaredBodyLength = Self.declaredBodyLength(in: head.headers)
        switch request.body {
        case nil:
            if let declaredBodyLength, declaredBodyLength != 0 {
                bodyFailed(EngineError.bodyLengthMismatch(declared: declaredBodyLength, sent: 0), of: exchange)
                return
            }
            sendWhole(head, body: Data(), of: exchange, context: context)
        case let .data(data):
            if let declaredBodyLength, declaredBodyLength != Int64(data.count) {
                // Nothing is sent: the head would promise what the body cannot keep.
                bodyFailed(EngineError.bodyLengthMismatch(declared: declaredBodyLength, sent: Int64(data.count)), of: exchange)
                return
            }
            sendWhole(head, body: data, of: exchange, context: context)
        case let .file(fileURL):
            context.writeAndFlush(wrapOutboundOut(.head(head)), promise: nil)
            let reader = FileChunkReader(url: fileURL, allocator: context.channel.allocator)
            streamBody(of: exchange) { try await reader.next() }
        case let .stream(_, nextChunk):
            context.writeAndFlush(wrapOutboundOut(.head(head)), promise: nil)
            streamBody(of: exchange) { try await nextChunk().map { ByteBuffer(data: $0) } }
        }
        context.read()
    }

    private func hostField(for key: ConnectionKey) -> String {
        if let knownHostField, knownHostField.key == key { return knownHostField.value }
        let value = RequestHead.hostField(for: key)
        knownHostField = (key, value)
        return value
    }

    // MARK: Request body

    /// Bodies in memory above this size are copied and written in slices of it, each flushed at
    /// once, so that a large body starts going out before all of it is copied. A body up to it is
    /// copied once and written whole: slices of 64 KiB cost a 1 MiB POST about 80-150 µs more CPU
    /// (an allocation, a trip down the pipeline and a write call each) for the same rate
    /// (bench-profile S5).
    private static let dataBodySlice = 1024 * 1024

    /// Sends a request whose bytes are all at hand: the head, the body (possibly empty), the end.
    ///
    /// The last write that carries bytes says when the request is sent. The end of a request
    /// that is not chunked carries none, and with a promise of its own NIO's encoder would write
    /// an empty buffer only to complete that promise in order: an allocation, a trip down the
    /// pipeline and an empty iovec for every request.
    private func sendWhole(_ head: HTTPRequestHead, body data: Data, of exchange: EngineExchange,
                           context: ChannelHandlerContext) {
        let written = context.eventLoop.makePromise(of: Void.self)
        context.write(wrapOutboundOut(.head(head)), promise: data.isEmpty ? written : nil)
        if !data.isEmpty { writeBody(data, context: context, lastWrite: written) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        whenSent(written.futureResult, exchange)
    }

    private func writeBody(_ data: Data, context: ChannelHandlerContext, lastWrite: EventLoopPromise<Void>) {
        guard data.count > Self.dataBodySlice else {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(data: data)))), promise: lastWrite)
            bytesSent = Int64(data.count)
            return
        }
        var start = data.startIndex
        while start < data.endIndex {
            let end = min(start + Self.dataBodySlice, data.endIndex)
            var slice = context.channel.allocator.buffer(capacity: end - start)
            slice.writeBytes(data[start..<end])
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(slice))), promise: end == data.endIndex ? lastWrite : nil)
            start = end
        }
        bytesSent = Int64(data.count)
    }

    /// The `Content-Length` of `headers`, unless the body is sent chunked.
    private static func declaredBodyLength(in headers: NIOHTTP1.HTTPHeaders) -> Int64? {
        guard !headers.contains(name: "transfer-encoding"), let field = headers.first(name: "content-length") else { return nil }
        return Int64(field.lupineTrimmingASCIIWhitespace())
    }

    /// Ends a streamed body: the chunked terminator, if any, is the request's last byte.
    private func writeEnd(of exchange: EngineExchange) {
        guard let context, self.exchange === exchange else { return }
        if let declaredBodyLength, bytesSent < declaredBodyLength {
            bodyFailed(EngineError.bodyLengthMismatch(declared: declaredBodyLength, sent: bytesSent), of: exchange)
            return
        }
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
        whenSent(written.futureResult, exchange)
    }

    /// Reports the request sent once `written` succeeds.
    private func whenSent(_ written: EventLoopFuture<Void>, _ exchange: EngineExchange) {
        written.assumeIsolated().whenSuccess { [self] in
            guard self.exchange === exchange else { return }
            requestSent = true
            lastActivity = clock.now
            if bytesSent > 0 {
                exchange.events.transportDidSendBodyBytes(exchange, totalBytesSent: bytesSent,
                                                          totalBytesExpectedToSend: expectedBodyBytes)
            }
            exchange.events.transportDidSendRequest(exchange)
        }
    }

    /// Sends the chunks `nextChunk` produces, produced on a task of their own while the
    /// previous ones travel to the socket; a slow peer holds the producer back (see
    /// `RequestBodyStream`).
    private func streamBody(of exchange: EngineExchange, nextChunk: @escaping @Sendable () async throws -> ByteBuffer?) {
        guard let bound else { return }
        let eventLoop = bound.eventLoop
        let stream = RequestBodyStream()
        bodyStream = stream
        bodyTask = Task {
            await stream.run(nextChunk: nextChunk,
                             write: { chunk in eventLoop.execute { bound.value.writeBodyChunk(chunk, of: exchange) } },
                             end: { eventLoop.execute { bound.value.writeEnd(of: exchange) } },
                             fail: { error in eventLoop.execute { bound.value.bodyFailed(error, of: exchange) } })
        }
    }

    private func writeBodyChunk(_ chunk: ByteBuffer, of exchange: EngineExchange) {
        guard let context, self.exchange === exchange, let bodyStream else { return }
        if let declaredBodyLength, bytesSent + Int64(chunk.readableBytes) > declaredBodyLength {
            bodyFailed(EngineError.bodyLengthMismatch(declared: declaredBodyLength, sent: bytesSent + Int64(chunk.readableBytes)),
                       of: exchange)
            return
        }
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(chunk))), promise: nil)
        bytesSent += Int64(chunk.readableBytes)
        lastActivity = clock.now
        exchange.events.transportDidSendBodyBytes(exchange, totalBytesSent: bytesSent,
                                                  totalBytesExpectedToSend: expectedBodyBytes)
        bodyStream.didWrite(channelIsWritable: context.channel.isWritable)
    }

    private func bodyFailed(_ error: any Error, of exchange: EngineExchange) {
        guard self.exchange === exchange else { return }
        fail(exchange, with: EngineErrors.urlError(for: error, url: exchange.request.url, authority: exchange.key.authority))
    }

    // MARK: Response

    private func deliver(_ part: HTTPClientResponsePart, of exchange: EngineExchange) {
        switch part {
        case let .head(head):
            sawResponseBytes = true
            // 1xx answers other than 101 precede the real response. On HTTP/1.1 each is followed by
            // an end of its own; swift-nio-http2 delivers none for them.
            if head.status.code >= 100, head.status.code < 200, head.status.code != 101 {
                isInformational = head.version.major < 2
                return
            }
            if head.status.code == 407, exchange.key.sendsAbsoluteForm {
                // The proxy, not the origin, wants credentials: reported as for a refused tunnel,
                // so that Session answers the challenge the same way for http and https.
                fail(exchange, with: EngineErrors.urlError(for: EngineError.proxyAuthenticationRequired,
                                                           url: exchange.request.url, authority: exchange.key.authority))
                return
            }
            // After a 101 the HTTP decoder stops: the connection cannot carry another exchange.
            // (An HTTP/2 stream has no keep-alive to ask for: NIO's `isKeepAlive` is false for
            // version 2, yet a stream that ended both ways is a clean end.)
            responseKeepsAlive = (head.version.major >= 2 || head.isKeepAlive) && head.status != .switchingProtocols
            if head.status == .switchingProtocols, let upgrade = exchange.upgrade {
                if let rejection = upgrade.rejection(of: head) {
                    exchange.events.transportDidReceive(exchange, head: Self.transportHead(head))
                    fail(exchange, with: exchange.failure(.badServerResponse, rejection))
                } else {
                    switchingHead = head
                }
                return
            }
            do {
                bodyDecoder = try ResponseBodyDecoder.make(for: head.headers, ratioLimit: decompressionRatioLimit)
            } catch {
                decodingFailed(exchange, error: error)
                return
            }
            exchange.events.transportDidReceive(exchange, head: Self.transportHead(head))
        case let .body(buffer):
            if let bodyDecoder {
                do {
                    let decoded = try bodyDecoder.decode(buffer)
                    if !decoded.isEmpty { exchange.events.transportDidReceive(exchange, bodyPart: decoded) }
                } catch {
                    decodingFailed(exchange, error: error)
                }
                return
            }
            // The Data shares the buffer's storage instead of copying it (fewer allocations, too,
            // than a copy, even for a small part).
            let bodyPart = buffer.getData(at: buffer.readerIndex, length: buffer.readableBytes, byteTransferStrategy: .noCopy) ?? Data()
            exchange.events.transportDidReceive(exchange, bodyPart: bodyPart)
        case .end:
            if isInformational {
                isInformational = false
                return
            }
            if let bodyDecoder {
                self.bodyDecoder = nil
                do {
                    try bodyDecoder.finish()
                } catch {
                    decodingFailed(exchange, error: error)
                    return
                }
            }
            if let head = switchingHead, let upgrade = exchange.upgrade {
                switchProtocols(exchange, to: upgrade, head: head)
            } else if deliveringRead {
                endPending = true
            } else {
                finish(exchange)
            }
        }
    }

    private static func transportHead(_ head: HTTPResponseHead) -> TransportResponseHead {
        let fields: [HTTPHeader]
        if head.version.major >= 2 {
            // swift-nio-http2's HTTP/1 codec adds `transfer-encoding: chunked` to a response without
            // content-length, for HTTP/1 handlers. HTTP/2 has no transfer-encoding (RFC 9113 section
            // 8.2.2; swift-nio-http2 refuses one from the peer), so any here is the codec's: the
            // caller sees the fields the server sent, as URLSession shows them.
            fields = head.headers.compactMap { name, value in
                name.lupineEqualsIgnoringASCIICase("transfer-encoding") ? nil : HTTPHeader(name: name, value: value)
            }
        } else {
            fields = head.headers.map { HTTPHeader(name: $0.name, value: $0.value) }
        }
        return TransportResponseHead(statusCode: Int(head.status.code), httpVersion: versionText(head.version), headerFields: fields)
    }

    /// The server accepted the upgrade: the connection leaves the exchange machinery (no idle
    /// gap, no deadline) and carries the new protocol; the exchange completes when the upgrade
    /// reports it.
    private func switchProtocols(_ exchange: EngineExchange, to upgrade: any ProtocolUpgrade, head: HTTPResponseHead) {
        endExchange()
        guard let owner else {
            context?.close(promise: nil)
            exchange.finish(error: exchange.failure(.networkConnectionLost))
            return
        }
        owner.exchangeHandler(self, switchesTo: upgrade) { switched in
            guard switched else {
                exchange.finish(error: exchange.failure(.networkConnectionLost))
                return
            }
            exchange.events.transportDidReceive(exchange, head: Self.transportHead(head))
            upgrade.didSwitch(head: head)
        }
    }

    private static func versionText(_ version: HTTPVersion) -> String {
        switch (version.major, version.minor) {
        case (1, 1): "HTTP/1.1"
        case (2, 0): "HTTP/2.0"
        case (1, 0): "HTTP/1.0"
        default: "HTTP/\(version.major).\(version.minor)"
        }
    }

    /// The consumer resumed reading: parts held meanwhile are delivered, then the socket is read.
    func resumeDelivery(of exchange: EngineExchange) {
        guard self.exchange === exchange else { return }
        lastActivity = clock.now
        while self.exchange === exchange, !held.isEmpty, !exchange.holdsDelivery() {
            deliver(held.removeFirst(), of: exchange)
        }
        guard self.exchange === exchange, held.isEmpty, heldRead, !exchange.holdsDelivery() else { return }
        heldRead = false
        context?.read()
    }

    // MARK: Ending

    private func finish(_ exchange: EngineExchange) {
        let reusable = requestSent && responseKeepsAlive && !requestWantsClose && !channelEnded && held.isEmpty
            && (context?.channel.isActive ?? false)
        endExchange()
        owner?.exchangeHandlerDidFinish(self, reusable: reusable)
        if !reusable { context?.close(promise: nil) }
        exchange.finish(error: nil)
    }

    /// Ends `exchange` with `error` (cancel, timeout, broken response); its connection or stream
    /// closes, since the rest of the response would otherwise be read as the next one.
    func fail(_ exchange: EngineExchange, with error: URLError) {
        guard self.exchange === exchange else { return }
        endExchange()
        context?.close(promise: nil)
        exchange.finish(error: error)
    }

    /// Closes the connection or stream this handler serves.
    func closeChannel() {
        context?.close(promise: nil)
    }

    func cancel(_ exchange: EngineExchange) {
        fail(exchange, with: exchange.failure(.cancelled))
    }

    /// The connection failed under `exchange`. A reused connection that died before any response
    /// byte was most likely closed by the server while idle: the request goes out once more on a
    /// new connection, as URLSession does.
    private func connectionFailed(_ exchange: EngineExchange, error: any Error) {
        let unprocessed = !sawResponseBytes && (owner?.exchangeHandlerRequestWasUnprocessed(self, error: error) ?? false)
        let deadReusedConnection = onReusedConnection && !sawResponseBytes && Self.isConnectionLoss(error)
        endExchange()
        if exchange.bodyIsReplayable, unprocessed || deadReusedConnection, exchange.prepareRetry(unprocessed: unprocessed) {
            exchange.pool.retry(exchange)
            return
        }
        if unprocessed {
            exchange.finish(error: exchange.failure(.networkConnectionLost,
                                                    "The server at \(exchange.key.authority) refused the request without processing it "
                                                        + "(HTTP/2 GOAWAY or REFUSED_STREAM); it was not sent again: "
                                                        + (exchange.bodyIsReplayable ? "it was refused again." : "its body cannot be replayed.")))
            return
        }
        exchange.finish(error: EngineErrors.urlError(for: error, url: exchange.request.url, authority: exchange.key.authority))
    }

    /// The body could not be decoded: the exchange fails (`cannotDecodeContentData`) and the
    /// connection closes, since the rest of the body would be read as the next response.
    private func decodingFailed(_ exchange: EngineExchange, error: any Error) {
        connectionFailed(exchange, error: error)
        context?.close(promise: nil)
    }

    private static func isConnectionLoss(_ error: any Error) -> Bool {
        EngineErrors.code(for: error) == .networkConnectionLost
    }

    private func endExchange() {
        exchange = nil
        bodyDecoder = nil
        endPending = false
        exchangeDeadline = nil
        bodyTask?.cancel()
        bodyTask = nil
        bodyStream?.cancel()
        bodyStream = nil
        // Emptied in place: `removeAll()` would allocate a new buffer for every exchange.
        if !held.isEmpty { held.removeAll(keepingCapacity: true) }
        if heldRead {
            heldRead = false
            context?.read()
        }
    }

    // MARK: Idle gap and resource deadline

    /// Makes sure the idle timer fires by `due`.
    private func armIdleTimer(by due: NIODeadline) {
        guard let context, let bound else { return }
        idleTimer.arm(by: due) { clock.schedule(on: context.eventLoop, at: $0) { bound.value.idleTimerFired() } }
    }

    private func idleTimerFired() {
        idleTimer.fired()
        guard let exchange else { return }
        let now = clock.now
        if exchange.isPaused {
            // A body paused by its consumer is not a quiet server: the gap restarts on resume.
            armIdleTimer(by: now + idleTimeout)
        } else if lastActivity + idleTimeout > now {
            armIdleTimer(by: lastActivity + idleTimeout)
        } else {
            fail(exchange, with: exchange.failure(.timedOut))
        }
    }

    /// Makes sure the deadline timer fires by `due`.
    private func armDeadlineTimer(by due: NIODeadline) {
        guard let context, let bound else { return }
        deadlineTimer.arm(by: due) { clock.schedule(on: context.eventLoop, at: $0) { bound.value.deadlineTimerFired() } }
    }

    private func deadlineTimerFired() {
        deadlineTimer.fired()
        guard let exchange, let exchangeDeadline else { return }
        if exchangeDeadline <= clock.now {
            fail(exchange, with: exchange.failure(.timedOut))
        } else {
            armDeadlineTimer(by: exchangeDeadline)
        }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// Drives one exchange at a time through the `TransportEvents` contract, on an HTTP/1.1
/// connection (one exchange after another) or on an HTTP/2 stream (one exchange): it writes the
/// request head and streams the body with backpressure, delivers the response head and body
/// parts, holds socket reads while the consumer has paused reading, and enforces the idle gap
/// and the resource deadline.
///
/// The handler does the I/O; `ExchangeStateMachine` holds the exchange's control state and
/// answers each event with the one action the handler performs. Parts decoded while reading is
/// paused wait in the machine, and the socket is not read again (`read` is held back), so
/// backpressure reaches the server. The paused flag is the machine's, on the event loop: the
/// exchange's `pauseReading()` and `resumeReading()` reach it through `applyReadDemand(of:)`.
final class ExchangeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    weak var owner: (any ExchangeHandlerOwner)?
    private let clock: any EngineClock
    private var context: ChannelHandlerContext?
    /// This handler, bound to its event loop, as exchanges and tasks hold it.
    private(set) var bound: NIOLoopBound<ExchangeHandler>?

    /// The current exchange; its state is `machine`'s.
    private(set) var exchange: EngineExchange?
    private var machine = ExchangeStateMachine()
    /// The request body's length when known, read once per exchange (a file's is a `stat`).
    private var expectedBodyBytes: Int64?
    private var bodyWriter = RequestBodyWriter()
    /// The timers of the idle gap and of the resource deadline. Each serves many exchanges: a
    /// timer that fires early re-arms itself for what remains.
    private var idleTimer = DueTimer()
    private var deadlineTimer = DueTimer()
    /// Largest decoded/received ratio of an encoded body.
    private let decompressionRatioLimit: Int
    /// Decodes the current response's body when it names codings Lupine decodes.
    private var bodyDecoder: ResponseBodyDecoder?
    /// The `Host` value of the connection's key, made for its first exchange, not for each.
    private var knownHostField: (key: ConnectionKey, value: String)?
    /// The exchange whose held parts are being delivered: a resume asked for from inside one of
    /// those deliveries lets that loop go on rather than starting another inside it.
    private var deliveringHeldPartsOf: EngineExchange?
    /// The exchange whose last request write is in flight (see `whenSent`).
    private var awaitingWrite: EngineExchange?

    /// Exchanges started on this connection or stream.
    var startedExchanges: Int { machine.startedExchanges }

    /// The server sent bytes before the first request of a connection promised to an exchange
    /// (see `ExchangeHandlerOwner.exchangeHandlerKeepsUnsolicitedInput`): they answer no request,
    /// so that exchange fails with `badServerResponse` as soon as it starts, whichever came first
    /// on the event loop, the bytes or the exchange.
    var serverSpokeFirst: Bool { machine.serverSpokeFirst }

    /// - Parameter decompressionRatioLimit: Largest decoded/received ratio of an encoded response
    ///   body (the engine configuration's, 200 by default).
    init(clock: any EngineClock, decompressionRatioLimit: Int = 200) {
        self.clock = clock
        self.decompressionRatioLimit = decompressionRatioLimit
    }

    // MARK: Channel events

    /// Bytes arrived on the connection (from its `ReadActivityObserver`): the idle gap restarts.
    func bytesArrived() {
        machine.bytesArrived(now: clock.now)
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
        perform(machine.readRequested())
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        perform(machine.partRead(unwrapInboundIn(data), now: clock.now))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        perform(machine.readComplete())
        context.fireChannelReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        bodyWriter.writabilityChanged(context.channel.isWritable)
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        perform(machine.errorCaught(error, isMalformedResponse: error is HTTPParserError || error is NIOHTTPDecoderError))
    }

    func channelInactive(context: ChannelHandlerContext) {
        perform(machine.channelInactive())
        context.fireChannelInactive()
    }

    // MARK: Starting

    /// Runs `exchange` here. `reused` says whether the connection carried exchanges before, which
    /// allows one retry on a new connection if it proves dead before any response byte.
    func start(_ exchange: EngineExchange, reused: Bool) {
        if machine.serverSpokeFirst {
            // Whatever became of the connection since, the server's first bytes were the fault.
            context?.close(promise: nil)
            exchange.finish(error: exchange.failure(.badServerResponse,
                                                    "The server at \(exchange.key.authority) sent bytes that are not an HTTP response "
                                                        + "before the request; the request was not sent."))
            return
        }
        guard let context, let bound, context.channel.isActive, !machine.isRunning else {
            // The connection died between the pool's choice and now.
            if reused, exchange.bodyIsReplayable, exchange.prepareRetry() {
                exchange.pool.retry(exchange)
            } else {
                exchange.finish(error: exchange.failure(.networkConnectionLost))
            }
            return
        }
        guard let consumerPaused = exchange.attach(to: bound) else {
            // Cancelled or timed out while the connection was being handed over.
            owner?.exchangeHandlerDidFinish(self, reusable: true)
            return
        }
        self.exchange = exchange
        let request = exchange.request
        expectedBodyBytes = request.body?.knownLength
        let now = clock.now
        let idleTimeout = TimeAmount.lupineSeconds(request.idleTimeout)
        let deadline = request.deadline.map { now + .lupineSeconds($0.timeIntervalSinceNow) }
        armIdleTimer(by: now + idleTimeout)
        if let deadline { armDeadlineTimer(by: deadline) }
        let head = RequestHead.make(for: request, key: exchange.key, hostField: hostField(for: exchange.key), upgrade: exchange.upgrade)
        let wholeBody: Data?
        switch request.body {
        case nil: wholeBody = Data()
        case let .data(data): wholeBody = data
        case .file, .stream: wholeBody = nil
        }
        let action = machine.start(.init(
            reused: reused,
            requestClosesConnection: head.headers[canonicalForm: "connection"].contains { $0.lupineEqualsIgnoringASCIICase("close") },
            asksUpgrade: exchange.upgrade != nil, sendsAbsoluteForm: exchange.key.sendsAbsoluteForm,
            wholeBodyLength: wholeBody.map { Int64($0.count) }, declaredBodyLength: Self.declaredBodyLength(in: head.headers),
            idleTimeout: idleTimeout, deadline: deadline, now: now, consumerPaused: consumerPaused))
        switch action {
        case .sendWholeRequest:
            whenSent(RequestBodyWriter.writeWhole(head, body: wholeBody ?? Data(), context: context), exchange)
        case .sendHeadThenStreamBody:
            context.writeAndFlush(wrapOutboundOut(.head(head)), promise: nil)
            switch request.body {
            case let .file(fileURL)?:
                let reader = FileChunkReader(url: fileURL, allocator: context.channel.allocator)
                streamBody(of: exchange) { try await reader.next() }
            case let .stream(_, nextChunk)?:
                streamBody(of: exchange) { try await nextChunk().map { ByteBuffer(data: $0) } }
            case nil, .data?:
                break
            }
        default:
            perform(action)
            return
        }
        context.read()
    }

    private func hostField(for key: ConnectionKey) -> String {
        if let knownHostField, knownHostField.key == key { return knownHostField.value }
        let value = RequestHead.hostField(for: key)
        knownHostField = (key, value)
        return value
    }

    /// The `Content-Length` of `headers`, unless the body is sent chunked.
    private static func declaredBodyLength(in headers: NIOHTTP1.HTTPHeaders) -> Int64? {
        guard !headers.contains(name: "transfer-encoding"), let field = headers.first(name: "content-length") else { return nil }
        return Int64(field.lupineTrimmingASCIIWhitespace())
    }

    // MARK: Request body

    /// Sends the chunks `nextChunk` produces (see `RequestBodyWriter`).
    private func streamBody(of exchange: EngineExchange, nextChunk: @escaping @Sendable () async throws -> ByteBuffer?) {
        guard let bound else { return }
        let eventLoop = bound.eventLoop
        bodyWriter.stream(nextChunk: nextChunk,
                          write: { chunk in eventLoop.execute { bound.value.bodyPartReady(chunk, of: exchange) } },
                          end: { eventLoop.execute { bound.value.bodyEnded(of: exchange) } },
                          fail: { error in eventLoop.execute { bound.value.bodyFailed(error, of: exchange) } })
    }

    private func bodyPartReady(_ chunk: ByteBuffer, of exchange: EngineExchange) {
        guard context != nil, self.exchange === exchange else { return }
        perform(machine.bodyPartReady(chunk, now: clock.now))
    }

    private func bodyEnded(of exchange: EngineExchange) {
        guard context != nil, self.exchange === exchange else { return }
        perform(machine.bodyEnded())
    }

    private func bodyFailed(_ error: any Error, of exchange: EngineExchange) {
        guard self.exchange === exchange else { return }
        perform(machine.bodyFailed(error))
    }

    /// Reports the request sent once `written` succeeds.
    ///
    /// The callback captures the handler alone, which Swift passes as the closure's context
    /// instead of allocating one; the exchange it was written for waits in `awaitingWrite`.
    private func whenSent(_ written: EventLoopFuture<Void>, _ exchange: EngineExchange) {
        awaitingWrite = exchange
        written.assumeIsolated().whenSuccess { [self] _ in lastWriteSucceeded() }
    }

    private func lastWriteSucceeded() {
        guard let exchange, awaitingWrite === exchange else { return }
        awaitingWrite = nil
        perform(machine.requestWritten(now: clock.now))
    }

    // MARK: Actions

    /// Does what the machine decided.
    private func perform(_ action: ExchangeStateMachine.Action) {
        switch action {
        case .none:
            break
        case .read:
            context?.read()
        case .close:
            context?.close(promise: nil)
        case .sendWholeRequest, .sendHeadThenStreamBody:
            // Answers to `start`, which performs them.
            break
        case let .writeBodyPart(chunk, totalBytesSent):
            guard let context, let exchange, bodyWriter.write(chunk, context: context) else { return }
            exchange.events.transportDidSendBodyBytes(exchange, totalBytesSent: totalBytesSent,
                                                      totalBytesExpectedToSend: expectedBodyBytes)
            bodyWriter.didWrite(channelIsWritable: context.channel.isWritable)
        case .writeBodyEnd:
            guard let context, let exchange else { return }
            whenSent(RequestBodyWriter.writeEnd(context: context), exchange)
        case let .reportRequestSent(bodyBytes):
            guard let exchange else { return }
            if bodyBytes > 0 {
                exchange.events.transportDidSendBodyBytes(exchange, totalBytesSent: bodyBytes,
                                                          totalBytesExpectedToSend: expectedBodyBytes)
            }
            exchange.events.transportDidSendRequest(exchange)
        case let .deliverHead(head):
            deliverHead(head)
        case let .deliverBody(buffer):
            deliverBody(buffer)
        case .deliverEnd:
            deliverEnd()
        case let .checkUpgrade(head):
            checkUpgrade(head)
        case let .switchProtocols(head, read):
            switchProtocols(head: head, read: read)
        case let .finish(reusable, read):
            finish(reusable: reusable, read: read)
        case let .fail(failure, read):
            fail(failure, read: read)
        case let .failConnection(failure, read):
            connectionFailed(failure, read: read)
        case .askToKeepUnsolicitedInput:
            if let owner, owner.exchangeHandlerKeepsUnsolicitedInput(self) {
                machine.unsolicitedInputKept()
            } else {
                context?.close(promise: nil)
            }
        case let .armIdleTimer(due):
            armIdleTimer(by: due)
        case let .armDeadlineTimer(due):
            armDeadlineTimer(by: due)
        }
    }

    // MARK: Response

    private func deliverHead(_ head: HTTPResponseHead) {
        guard let exchange else { return }
        do {
            bodyDecoder = try ResponseBodyDecoder.make(for: head.headers, ratioLimit: decompressionRatioLimit)
        } catch {
            perform(machine.decodingFailed(error))
            return
        }
        exchange.events.transportDidReceive(exchange, head: TransportResponseHead(head))
    }

    private func deliverBody(_ buffer: ByteBuffer) {
        guard let exchange else { return }
        if let bodyDecoder {
            do {
                let decoded = try bodyDecoder.decode(buffer)
                if !decoded.isEmpty { exchange.events.transportDidReceive(exchange, bodyPart: decoded) }
            } catch {
                perform(machine.decodingFailed(error))
            }
            return
        }
        // The Data shares the buffer's storage instead of copying it (fewer allocations, too,
        // than a copy, even for a small part).
        let bodyPart = buffer.getData(at: buffer.readerIndex, length: buffer.readableBytes, byteTransferStrategy: .noCopy) ?? Data()
        exchange.events.transportDidReceive(exchange, bodyPart: bodyPart)
    }

    private func deliverEnd() {
        if let bodyDecoder {
            self.bodyDecoder = nil
            do {
                try bodyDecoder.finish()
            } catch {
                perform(machine.decodingFailed(error))
                return
            }
        }
        perform(machine.responseEndDelivered())
    }

    /// A 101 to an upgrade exchange: the upgrade accepts it or the exchange fails.
    private func checkUpgrade(_ head: HTTPResponseHead) {
        guard let exchange, let upgrade = exchange.upgrade else { return }
        if let rejection = upgrade.rejection(of: head) {
            exchange.events.transportDidReceive(exchange, head: TransportResponseHead(head))
            perform(machine.upgradeRejected(rejection))
        } else {
            machine.upgradeAccepted(head)
        }
    }

    /// The server accepted the upgrade: the connection leaves the exchange machinery (no idle
    /// gap, no deadline) and carries the new protocol; the exchange completes when the upgrade
    /// reports it.
    private func switchProtocols(head: HTTPResponseHead, read: Bool) {
        guard let exchange else { return }
        endExchange(read: read)
        exchange.handOver()
        guard let owner, let upgrade = exchange.upgrade else {
            context?.close(promise: nil)
            exchange.finish(error: exchange.failure(.networkConnectionLost))
            return
        }
        owner.exchangeHandler(self, switchesTo: upgrade) { switched in
            guard switched else {
                exchange.finish(error: exchange.failure(.networkConnectionLost))
                return
            }
            exchange.events.transportDidReceive(exchange, head: TransportResponseHead(head))
            upgrade.didSwitch(head: head)
        }
    }

    /// Brings the machine's paused flag in line with the read demand `exchange` recorded last
    /// (see `EngineExchange.askForReading(paused:)`); on resume, parts held meanwhile are
    /// delivered, then the socket is read. On the event loop: from the exchange's hop, or at once
    /// when its consumer called from the event loop, even from inside a delivery.
    func applyReadDemand(of exchange: EngineExchange) {
        guard self.exchange === exchange else { return }
        if exchange.wantsReadingPaused {
            machine.consumerPaused()
            return
        }
        guard machine.consumerResumed(now: clock.now), deliveringHeldPartsOf !== exchange else { return }
        let outer = deliveringHeldPartsOf
        deliveringHeldPartsOf = exchange
        defer { deliveringHeldPartsOf = outer }
        while self.exchange === exchange {
            let action = machine.nextHeldPart()
            if case .none = action { return }
            perform(action)
        }
    }

    // MARK: Ending

    private func finish(reusable: Bool, read: Bool) {
        guard let exchange else { return }
        let reusable = reusable && (context?.channel.isActive ?? false)
        endExchange(read: read)
        owner?.exchangeHandlerDidFinish(self, reusable: reusable)
        if !reusable { context?.close(promise: nil) }
        exchange.finish(error: nil)
    }

    /// Ends the exchange with `failure`; its connection or stream closes, since the rest of the
    /// response would otherwise be read as the next one.
    private func fail(_ failure: ExchangeStateMachine.Failure, read: Bool) {
        guard let exchange else { return }
        let error = switch failure {
        case .timedOut: exchange.failure(.timedOut)
        case .cancelled: exchange.failure(.cancelled)
        case let .upgradeRejected(reason): exchange.failure(.badServerResponse, reason)
        case let .error(error): EngineErrors.urlError(for: error, url: exchange.request.url, authority: exchange.key.authority)
        case let .urlError(error): error
        }
        endExchange(read: read)
        context?.close(promise: nil)
        exchange.finish(error: error)
    }

    /// Ends `exchange` with `error` (a failure of its HTTP/2 connection).
    func fail(_ exchange: EngineExchange, with error: URLError) {
        guard self.exchange === exchange else { return }
        perform(machine.fail(.urlError(error)))
    }

    /// Closes the connection or stream this handler serves.
    func closeChannel() {
        context?.close(promise: nil)
    }

    func cancel(_ exchange: EngineExchange) {
        guard self.exchange === exchange else { return }
        perform(machine.fail(.cancelled))
    }

    /// The connection failed under the exchange. A reused connection that died before any
    /// response byte was most likely closed by the server while idle: the request goes out once
    /// more on a new connection, as URLSession does.
    private func connectionFailed(_ failure: ExchangeStateMachine.ConnectionFailure, read: Bool) {
        guard let exchange else { return }
        defer { if failure.closesChannel { context?.close(promise: nil) } }
        let error = failure.error
        let unprocessed = failure.beforeResponse && (owner?.exchangeHandlerRequestWasUnprocessed(self, error: error) ?? false)
        let deadReusedConnection = failure.onReusedConnection && failure.beforeResponse
            && EngineErrors.code(for: error) == .networkConnectionLost
        endExchange(read: read)
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

    /// Lets go of what served the exchange that ended in the machine; `read`: a socket read
    /// held back for a paused consumer is due.
    private func endExchange(read: Bool) {
        exchange = nil
        awaitingWrite = nil
        bodyDecoder = nil
        bodyWriter.stop()
        if read { context?.read() }
    }

    // MARK: Idle gap and resource deadline

    /// Makes sure the idle timer fires by `due`.
    private func armIdleTimer(by due: NIODeadline) {
        guard let context, let bound else { return }
        idleTimer.arm(by: due) { clock.schedule(on: context.eventLoop, at: $0) { bound.value.idleTimerFired() } }
    }

    private func idleTimerFired() {
        idleTimer.fired()
        perform(machine.idleTimerFired(now: clock.now))
    }

    /// Makes sure the deadline timer fires by `due`.
    private func armDeadlineTimer(by due: NIODeadline) {
        guard let context, let bound else { return }
        deadlineTimer.arm(by: due) { clock.schedule(on: context.eventLoop, at: $0) { bound.value.deadlineTimerFired() } }
    }

    private func deadlineTimerFired() {
        deadlineTimer.fired()
        perform(machine.deadlineTimerFired(now: clock.now))
    }
}

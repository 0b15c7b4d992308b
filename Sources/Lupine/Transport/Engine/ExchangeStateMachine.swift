import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import NIOHTTP1

/// The control state of the exchanges of one HTTP/1.1 connection or one HTTP/2 stream, apart
/// from their I/O: `ExchangeHandler` feeds each event in and performs the one `Action` that comes
/// back. It does no I/O and holds no channel, so it is tested as a value.
///
/// An exchange goes from idle through sending its request (head, then body) and awaiting the
/// response head to receiving the response (delivering parts, or holding them while the consumer
/// has paused reading) and back to idle: finished (reusable or not), failed, or switched to
/// another protocol. Used on one event loop only.
///
/// The consumer's read demand is a flag of the running exchange, kept here and so confined to
/// the event loop like the rest: the handler sets it when the exchange starts and whenever the
/// exchange's `pauseReading()` or `resumeReading()` reaches it, and each part read, each read
/// asked for and each held part checks it without a lock.
struct ExchangeStateMachine {
    /// What the handler does next.
    enum Action {
        case none
        /// Read from the socket.
        case read
        /// Close the connection or stream.
        case close
        /// Write the request head and its whole body (possibly empty), then read.
        case sendWholeRequest
        /// Write the request head, start streaming its body, then read.
        case sendHeadThenStreamBody
        /// Write this chunk of a streamed body; `totalBytesSent` counts it.
        case writeBodyPart(ByteBuffer, totalBytesSent: Int64)
        /// Write the end of a streamed body.
        case writeBodyEnd
        /// The request's last byte is written: report it sent, with its body's length.
        case reportRequestSent(bodyBytes: Int64)
        /// Deliver the response head (after setting up its body's decoding).
        case deliverHead(HTTPResponseHead)
        /// Deliver a part of the response body.
        case deliverBody(ByteBuffer)
        /// Deliver the end of the response body, then report `responseEndDelivered()`.
        case deliverEnd
        /// A 101 answers the upgrade the exchange asked for: report `upgradeAccepted(_:)` or
        /// `upgradeRejected(_:)`.
        case checkUpgrade(HTTPResponseHead)
        /// The server switched protocols: the exchange is over here and the connection carries
        /// the new protocol.
        case switchProtocols(HTTPResponseHead, read: Bool)
        /// The exchange ended with its whole response. `read`: a socket read was held back and is
        /// due now.
        case finish(reusable: Bool, read: Bool)
        /// The exchange fails with `failure`; the connection or stream closes.
        case fail(Failure, read: Bool)
        /// The connection failed under the exchange (the handler decides on a retry).
        case failConnection(ConnectionFailure, read: Bool)
        /// Bytes that answer no request: ask the owner whether an exchange is promised to the
        /// connection, then report `unsolicitedInputKept()` or close.
        case askToKeepUnsolicitedInput
        /// Make sure the idle timer fires by then.
        case armIdleTimer(NIODeadline)
        /// Make sure the deadline timer fires by then.
        case armDeadlineTimer(NIODeadline)
    }

    /// Why an exchange fails, for the handler to describe as a `URLError`.
    enum Failure {
        case timedOut
        case cancelled
        /// The server refused the upgrade's 101 for this reason (`badServerResponse`).
        case upgradeRejected(String)
        /// An engine or body producer error, mapped by `EngineErrors.urlError`.
        case error(any Error)
        /// A failure described already.
        case urlError(URLError)
    }

    /// The connection failed under an exchange, with what decides whether it may go again.
    struct ConnectionFailure {
        var error: any Error
        /// No byte of the response had arrived.
        var beforeResponse: Bool
        /// The connection carried exchanges before this one.
        var onReusedConnection: Bool
        /// The handler closes the connection after failing the exchange.
        var closesChannel: Bool
    }

    /// What starts an exchange.
    struct Start {
        /// The connection carried exchanges before.
        var reused: Bool
        /// The request head asks for `Connection: close`.
        var requestClosesConnection: Bool
        /// The exchange asks to switch protocols.
        var asksUpgrade: Bool
        /// The request goes to an HTTP proxy in absolute form: a 407 is the proxy's.
        var sendsAbsoluteForm: Bool
        /// The length of a body whose bytes are all at hand (0 for none); nil for a streamed one.
        var wholeBodyLength: Int64?
        /// The body length the head declares with `Content-Length` (a body not sent chunked).
        var declaredBodyLength: Int64?
        var idleTimeout: TimeAmount
        var deadline: NIODeadline?
        var now: NIODeadline
        /// The consumer paused reading before the exchange started (while it waited in its pool,
        /// or before a retry).
        var consumerPaused = false
    }

    enum RequestPhase {
        /// The head is written and a streamed body goes out chunk by chunk.
        case streamingBody(sent: Int64, declared: Int64?)
        /// Everything is written; sent once the last write completes.
        case writingLastBytes(bodyBytes: Int64)
        case sent(bodyBytes: Int64)
    }

    enum ResponsePhase {
        /// No final head yet; `sawInterimResponse` once a 1xx came.
        case awaitingHead(sawInterimResponse: Bool)
        /// An HTTP/1.1 1xx head arrived; its end comes next.
        case interim
        /// The final head arrived.
        case receiving(keepAlive: Bool)
        /// The server's 101 to the upgrade was accepted; switched to once its end arrives.
        case switching(HTTPResponseHead)
        /// The end is being delivered (its body's decoding finishes); `fromRead`: it was just read.
        case deliveringEnd(keepAlive: Bool, fromRead: Bool)
        /// The response ended in the read being handled: the exchange finishes once that read is
        /// done, so that bytes the server sent past the response in the same read close the
        /// connection instead of being taken for the next exchange's response.
        case endPending(keepAlive: Bool)

        /// A response head (interim or final) arrived.
        var sawResponseBytes: Bool {
            if case let .awaitingHead(sawInterimResponse) = self { sawInterimResponse } else { true }
        }
    }

    /// The running exchange.
    struct Exchange {
        var request: RequestPhase
        var response: ResponsePhase
        let reused: Bool
        let requestClosesConnection: Bool
        let asksUpgrade: Bool
        let sendsAbsoluteForm: Bool
        var lastActivity: NIODeadline
        let idleTimeout: TimeAmount
        let deadline: NIODeadline?
        /// A socket read was held back while parts are held: due when they are delivered.
        var readHeld = false
        /// The connection ended while a complete response was still held for a paused consumer.
        var channelEnded = false
        /// The consumer has paused reading: parts read are held, reads are held back, and the
        /// idle gap does not run.
        var consumerPaused: Bool
    }

    enum State {
        case idle
        case running(Exchange)
    }

    private(set) var state = State.idle
    /// Parts read while the consumer has paused reading, delivered in order when it resumes.
    /// Kept outside `state` so that appending never copies it.
    private var held = CircularBuffer<HTTPClientResponsePart>()
    /// Exchanges started on this connection or stream.
    private(set) var startedExchanges = 0
    /// The server sent bytes before the first request of a connection promised to an exchange:
    /// they answer no request, so that exchange fails with `badServerResponse` as soon as it
    /// starts, whichever came first on the event loop, the bytes or the exchange.
    private(set) var serverSpokeFirst = false
    /// A `ReadActivityObserver` reports the bytes read (HTTP/1.1): each part read does not note
    /// activity itself. On an HTTP/2 stream, each frame does.
    private(set) var observesBytes = false

    var isRunning: Bool {
        if case .running = state { true } else { false }
    }

    var heldParts: Int { held.count }

    /// Whether the running exchange's consumer has paused reading.
    var isConsumerPaused: Bool {
        if case let .running(exchange) = state { exchange.consumerPaused } else { false }
    }

    // MARK: Starting and sending

    /// Starts an exchange; the machine must be idle.
    mutating func start(_ start: Start) -> Action {
        startedExchanges += 1
        var exchange = Exchange(request: .streamingBody(sent: 0, declared: start.declaredBodyLength),
                                response: .awaitingHead(sawInterimResponse: false), reused: start.reused,
                                requestClosesConnection: start.requestClosesConnection, asksUpgrade: start.asksUpgrade,
                                sendsAbsoluteForm: start.sendsAbsoluteForm, lastActivity: start.now,
                                idleTimeout: start.idleTimeout, deadline: start.deadline, consumerPaused: start.consumerPaused)
        guard let length = start.wholeBodyLength else {
            state = .running(exchange)
            return .sendHeadThenStreamBody
        }
        exchange.request = .writingLastBytes(bodyBytes: length)
        state = .running(exchange)
        if let declared = start.declaredBodyLength, declared != length {
            // Nothing is sent: the head would promise what the body cannot keep.
            return fail(.error(EngineError.bodyLengthMismatch(declared: declared, sent: length)))
        }
        return .sendWholeRequest
    }

    /// A chunk of a streamed body is ready to go.
    mutating func bodyPartReady(_ chunk: ByteBuffer, now: NIODeadline) -> Action {
        guard case var .running(exchange) = state, case let .streamingBody(sent, declared) = exchange.request else { return .none }
        let total = sent + Int64(chunk.readableBytes)
        if let declared, total > declared {
            return fail(.error(EngineError.bodyLengthMismatch(declared: declared, sent: total)))
        }
        exchange.request = .streamingBody(sent: total, declared: declared)
        exchange.lastActivity = now
        state = .running(exchange)
        return .writeBodyPart(chunk, totalBytesSent: total)
    }

    /// The producer of a streamed body has no more.
    mutating func bodyEnded() -> Action {
        guard case var .running(exchange) = state, case let .streamingBody(sent, declared) = exchange.request else { return .none }
        if let declared, sent < declared {
            return fail(.error(EngineError.bodyLengthMismatch(declared: declared, sent: sent)))
        }
        exchange.request = .writingLastBytes(bodyBytes: sent)
        state = .running(exchange)
        return .writeBodyEnd
    }

    /// The producer of a streamed body failed.
    mutating func bodyFailed(_ error: any Error) -> Action {
        fail(.error(error))
    }

    /// The request's last write completed.
    mutating func requestWritten(now: NIODeadline) -> Action {
        guard case var .running(exchange) = state, case let .writingLastBytes(bodyBytes) = exchange.request else { return .none }
        exchange.request = .sent(bodyBytes: bodyBytes)
        exchange.lastActivity = now
        state = .running(exchange)
        return .reportRequestSent(bodyBytes: bodyBytes)
    }

    // MARK: Reading

    /// Bytes arrived on the connection (before they make up a part): the idle gap restarts.
    mutating func bytesArrived(now: @autoclosure () -> NIODeadline) {
        observesBytes = true
        guard case var .running(exchange) = state else { return }
        exchange.lastActivity = now()
        state = .running(exchange)
    }

    /// The channel asks for a read: held back while parts wait for a paused consumer.
    mutating func readRequested() -> Action {
        guard case var .running(exchange) = state, !held.isEmpty || exchange.consumerPaused else { return .read }
        exchange.readHeld = true
        state = .running(exchange)
        return .none
    }

    /// A response part was read.
    mutating func partRead(_ part: HTTPClientResponsePart, now: @autoclosure () -> NIODeadline) -> Action {
        guard case var .running(exchange) = state else { return unsolicitedInput() }
        if case let .endPending(keepAlive) = exchange.response {
            // Past the end of the response: the connection is not reused.
            if keepAlive {
                exchange.response = .endPending(keepAlive: false)
                state = .running(exchange)
            }
            return .none
        }
        if !observesBytes {
            exchange.lastActivity = now()
            state = .running(exchange)
        }
        if !held.isEmpty || exchange.consumerPaused {
            held.append(part)
            return .none
        }
        return receive(part, fromRead: true)
    }

    /// The read is done: a response that ended in it finishes now.
    mutating func readComplete() -> Action {
        guard case let .running(exchange) = state, case let .endPending(keepAlive) = exchange.response else { return .none }
        return finish(exchange, keepAlive: keepAlive)
    }

    /// The consumer is not paused: the next held part to deliver, or the read held back once
    /// none is left. The handler calls it again after each delivery until it answers `.none`,
    /// which it also does as soon as a delivery paused the consumer.
    mutating func nextHeldPart() -> Action {
        while !held.isEmpty {
            guard case let .running(exchange) = state, !exchange.consumerPaused else { return .none }
            let action = receive(held.removeFirst(), fromRead: false)
            if case .none = action { continue }
            return action
        }
        guard case var .running(exchange) = state, exchange.readHeld, !exchange.consumerPaused else { return .none }
        exchange.readHeld = false
        state = .running(exchange)
        return .read
    }

    /// The consumer paused reading: from now on parts are held, reads are held back and the idle
    /// gap stops. Nothing when no exchange is running (the exchange remembers it for the next).
    mutating func consumerPaused() {
        guard case var .running(exchange) = state, !exchange.consumerPaused else { return }
        exchange.consumerPaused = true
        state = .running(exchange)
    }

    /// The consumer resumed reading: the idle gap restarts. True when it had paused: held parts
    /// and a held read are due (`nextHeldPart()`).
    mutating func consumerResumed(now: NIODeadline) -> Bool {
        guard case var .running(exchange) = state, exchange.consumerPaused else { return false }
        exchange.consumerPaused = false
        exchange.lastActivity = now
        state = .running(exchange)
        return true
    }

    private mutating func receive(_ part: HTTPClientResponsePart, fromRead: Bool) -> Action {
        guard case var .running(exchange) = state else { return .none }
        switch part {
        case let .head(head):
            let code = head.status.code
            // 1xx answers other than 101 precede the real response. On HTTP/1.1 each is followed by
            // an end of its own; swift-nio-http2 delivers none for them.
            if code >= 100, code < 200, code != 101 {
                exchange.response = head.version.major < 2 ? .interim : .awaitingHead(sawInterimResponse: true)
                state = .running(exchange)
                return .none
            }
            if code == 407, exchange.sendsAbsoluteForm {
                // The proxy, not the origin, wants credentials: reported as for a refused tunnel,
                // so that Session answers the challenge the same way for http and https.
                exchange.response = .receiving(keepAlive: false)
                state = .running(exchange)
                return fail(.error(EngineError.proxyAuthenticationRequired))
            }
            // After a 101 the HTTP decoder stops: the connection cannot carry another exchange.
            // (An HTTP/2 stream has no keep-alive to ask for: NIO's `isKeepAlive` is false for
            // version 2, yet a stream that ended both ways is a clean end.)
            let keepAlive = (head.version.major >= 2 || head.isKeepAlive) && head.status != .switchingProtocols
            exchange.response = .receiving(keepAlive: keepAlive)
            state = .running(exchange)
            if head.status == .switchingProtocols, exchange.asksUpgrade { return .checkUpgrade(head) }
            return .deliverHead(head)
        case let .body(buffer):
            return .deliverBody(buffer)
        case .end:
            switch exchange.response {
            case .interim:
                exchange.response = .awaitingHead(sawInterimResponse: true)
                state = .running(exchange)
                return .none
            case let .switching(head):
                return end(with: .switchProtocols(head, read: exchange.readHeld))
            case let .receiving(keepAlive), let .deliveringEnd(keepAlive, _), let .endPending(keepAlive):
                exchange.response = .deliveringEnd(keepAlive: keepAlive, fromRead: fromRead)
            case .awaitingHead:
                exchange.response = .deliveringEnd(keepAlive: true, fromRead: fromRead)
            }
            state = .running(exchange)
            return .deliverEnd
        }
    }

    /// The end of the response body was delivered (its decoding finished well).
    mutating func responseEndDelivered() -> Action {
        guard case var .running(exchange) = state, case let .deliveringEnd(keepAlive, fromRead) = exchange.response else {
            return .none
        }
        guard fromRead else { return finish(exchange, keepAlive: keepAlive) }
        exchange.response = .endPending(keepAlive: keepAlive)
        state = .running(exchange)
        return .none
    }

    /// The upgrade accepts the server's 101: the connection switches once the 101's end arrives.
    mutating func upgradeAccepted(_ head: HTTPResponseHead) {
        guard case var .running(exchange) = state else { return }
        exchange.response = .switching(head)
        state = .running(exchange)
    }

    /// The upgrade refuses the server's 101 (the head has been reported).
    mutating func upgradeRejected(_ reason: String) -> Action {
        fail(.upgradeRejected(reason))
    }

    /// The response body could not be decoded: the exchange fails and the connection closes,
    /// since the rest of the body would be read as the next response.
    mutating func decodingFailed(_ error: any Error) -> Action {
        guard case let .running(exchange) = state else { return .none }
        return connectionFailed(exchange, error: error, closesChannel: true)
    }

    // MARK: Connection events

    /// The pipeline caught `error`; `isMalformedResponse`: the HTTP decoder refused the bytes.
    mutating func errorCaught(_ error: any Error, isMalformedResponse: Bool) -> Action {
        guard case let .running(exchange) = state else { return isMalformedResponse ? unsolicitedInput() : .close }
        if case .endPending = exchange.response {
            // The response was whole; what came after it is not.
            return finish(exchange, keepAlive: false)
        }
        if heldResponseIsComplete { return .close }
        return connectionFailed(exchange, error: error, closesChannel: true)
    }

    /// The connection or stream ended.
    mutating func channelInactive() -> Action {
        guard case var .running(exchange) = state else { return .none }
        if case let .endPending(keepAlive) = exchange.response { return finish(exchange, keepAlive: keepAlive) }
        if heldResponseIsComplete {
            // Delivered when the consumer resumes; the connection is not reused.
            exchange.channelEnded = true
            state = .running(exchange)
            return .none
        }
        return connectionFailed(exchange, error: ChannelError.eof, closesChannel: false)
    }

    /// The owner keeps the unsolicited bytes for the exchange promised to the connection.
    mutating func unsolicitedInputKept() {
        serverSpokeFirst = true
    }

    /// Bytes with no exchange to answer are not a response to anything: a connection that sent
    /// them cannot be trusted with a request. An idle connection closes; a new one already promised
    /// to an exchange keeps the fault for it.
    private func unsolicitedInput() -> Action {
        if serverSpokeFirst { return .none }
        return startedExchanges == 0 ? .askToKeepUnsolicitedInput : .close
    }

    private var heldResponseIsComplete: Bool {
        held.contains { if case .end = $0 { true } else { false } }
    }

    // MARK: Timers, cancel, failures

    /// The idle timer fired at `now`.
    mutating func idleTimerFired(now: NIODeadline) -> Action {
        guard case let .running(exchange) = state else { return .none }
        if exchange.consumerPaused {
            // A body paused by its consumer is not a quiet server: the gap restarts on resume.
            return .armIdleTimer(now + exchange.idleTimeout)
        }
        if exchange.lastActivity + exchange.idleTimeout > now { return .armIdleTimer(exchange.lastActivity + exchange.idleTimeout) }
        return fail(.timedOut)
    }

    /// The deadline timer fired at `now`.
    mutating func deadlineTimerFired(now: NIODeadline) -> Action {
        guard case let .running(exchange) = state, let deadline = exchange.deadline else { return .none }
        if deadline <= now { return fail(.timedOut) }
        return .armDeadlineTimer(deadline)
    }

    /// The exchange fails with `failure` (cancel, timeout, broken response); its connection or
    /// stream closes, since the rest of the response would otherwise be read as the next one.
    mutating func fail(_ failure: Failure) -> Action {
        guard case let .running(exchange) = state else { return .none }
        return end(with: .fail(failure, read: exchange.readHeld))
    }

    // MARK: Ending

    private mutating func finish(_ exchange: Exchange, keepAlive: Bool) -> Action {
        let sent = if case .sent = exchange.request { true } else { false }
        let reusable = sent && keepAlive && !exchange.requestClosesConnection && !exchange.channelEnded && held.isEmpty
        return end(with: .finish(reusable: reusable, read: exchange.readHeld))
    }

    private mutating func connectionFailed(_ exchange: Exchange, error: any Error, closesChannel: Bool) -> Action {
        let failure = ConnectionFailure(error: error, beforeResponse: !exchange.response.sawResponseBytes,
                                        onReusedConnection: exchange.reused, closesChannel: closesChannel)
        return end(with: .failConnection(failure, read: exchange.readHeld))
    }

    /// Ends the running exchange with `action`.
    private mutating func end(with action: Action) -> Action {
        state = .idle
        // Emptied in place: `removeAll()` would allocate a new buffer for every exchange.
        if !held.isEmpty { held.removeAll(keepingCapacity: true) }
        return action
    }
}

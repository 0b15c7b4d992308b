import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import NIOHTTP1

/// Sends the opening request of a WebSocket connection, and reports a response that refuses the
/// upgrade (any status but 101) to the exchange like any HTTP response, honouring its read demand.
///
/// `NIOHTTPClientUpgradeHandler`, in front of it, adds the upgrade header fields and handles a
/// 101 itself: this handler is then removed and never sees it.
final class WebSocketHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let connection: WebSocketConnection
    private let head: HTTPRequestHead
    private let timeout: TimeAmount
    private var timer: Scheduled<Void>?
    /// The server answered 101 without a valid `Sec-WebSocket-Accept`; its head follows.
    private var upgradeRefused = false
    /// Response parts held while the exchange's consumer has paused reading.
    private var heldParts: [HTTPClientResponsePart] = []
    private var isPaused = false
    /// The connection ended while a 101 was being handled.
    private var endedDuringUpgrade = false

    init(connection: WebSocketConnection, head: HTTPRequestHead, timeout: TimeAmount) {
        self.connection = connection
        self.head = head
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        storedContext = context
        // The whole handshake (connection, TLS, request, response head) must fit in the timeout.
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            self.connection.record(self.connection.failure(.timedOut))
            context.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenSuccess {
            self.connection.didSendRequest()
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        guard !isPaused else {
            heldParts.append(part)
            return
        }
        deliver(part, context: context)
    }

    private func deliver(_ part: HTTPClientResponsePart, context: ChannelHandlerContext) {
        switch part {
        case let .head(responseHead):
            timer?.cancel()
            timer = nil
            if upgradeRefused || responseHead.status == .switchingProtocols {
                connection.record(connection.failure(.badServerResponse,
                                                     "The server's WebSocket handshake response is not valid."))
            }
            connection.didReceive(head: responseHead)
            // The upgrade was refused after the connection ended: nothing more will come.
            if endedDuringUpgrade { connection.complete(error: connection.failure(.networkConnectionLost)) }
        case let .body(buffer):
            connection.didReceive(bodyPart: buffer)
        case .end:
            // A refused upgrade ends the exchange; the connection is not reused.
            connection.complete(error: nil)
            context.close(promise: nil)
        }
    }

    /// The consumer paused or resumed reading: this follows what it asks for now. On resume,
    /// delivery continues with the parts held meanwhile.
    func applyReadDemand() {
        if connection.wantsPause {
            isPaused = true
            return
        }
        guard isPaused, let context = storedContext else { return }
        isPaused = false
        while !isPaused, !heldParts.isEmpty {
            deliver(heldParts.removeFirst(), context: context)
        }
    }

    private var storedContext: ChannelHandlerContext?

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOHTTPClientUpgradeError {
            // The response head comes next and is reported with this failure.
            upgradeRefused = true
            return
        }
        connection.record(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
        // A 101 came with the end of the connection: the upgrade still runs, and ends it.
        guard !connection.isSwitchingProtocols else {
            endedDuringUpgrade = true
            return
        }
        let endIsHeld = heldParts.contains { if case .end = $0 { true } else { false } }
        // A complete response held for the consumer is still delivered when it resumes.
        guard !endIsHeld else { return }
        storedContext = nil
        connection.complete(error: connection.failure(.networkConnectionLost))
    }
}

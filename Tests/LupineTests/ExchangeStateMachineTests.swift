import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import NIOCore
import NIOHTTP1
import Testing

/// The exchange state machine as a value: each event in, the one action out.
@Suite struct ExchangeStateMachineTests {
    typealias Machine = ExchangeStateMachine

    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
    static let idleTimeout = TimeAmount.seconds(10)

    /// A machine whose exchange has started; `body` nil streams the request body.
    static func started(body: Int64? = 0, declared: Int64? = nil, reused: Bool = false, requestClosesConnection: Bool = false,
                        asksUpgrade: Bool = false, sendsAbsoluteForm: Bool = false, deadline: NIODeadline? = nil,
                        expecting expected: String? = nil) -> Machine {
        var machine = Machine()
        let action = machine.start(.init(reused: reused, requestClosesConnection: requestClosesConnection, asksUpgrade: asksUpgrade,
                                         sendsAbsoluteForm: sendsAbsoluteForm, wholeBodyLength: body, declaredBodyLength: declared,
                                         idleTimeout: idleTimeout, deadline: deadline, now: start))
        #expect(action.name == expected ?? (body == nil ? "sendHeadThenStreamBody" : "sendWholeRequest"))
        return machine
    }

    /// A machine whose request is sent, awaiting the response head.
    static func sent() -> Machine {
        var machine = started()
        #expect(machine.requestWritten(now: start).name == "reportRequestSent(0)")
        return machine
    }

    static func head(_ status: HTTPResponseStatus, version: HTTPVersion = .http1_1, headers: NIOHTTP1.HTTPHeaders = [:]) -> HTTPClientResponsePart {
        .head(HTTPResponseHead(version: version, status: status, headers: headers))
    }

    static let body = HTTPClientResponsePart.body(ByteBuffer(string: "ok"))

    // MARK: Sending

    @Test func wholeRequestThenResponseFinishesReusableOnceTheReadIsComplete() {
        var machine = Self.sent()
        #expect(machine.partRead(Self.head(.ok), now: Self.start).name == "deliverHead(200)")
        #expect(machine.partRead(Self.body, now: Self.start).name == "deliverBody(2)")
        #expect(machine.partRead(.end(nil), now: Self.start).name == "deliverEnd")
        #expect(machine.responseEndDelivered().name == "none")
        #expect(machine.isRunning)
        #expect(machine.readComplete().name == "finish(reusable: true, read: false)")
        #expect(!machine.isRunning)
        #expect(machine.startedExchanges == 1)
    }

    @Test func streamedBodyCountsItsBytesAndSendsTheEndAfterTheLastChunk() {
        var machine = Self.started(body: nil)
        #expect(machine.bodyPartReady(ByteBuffer(string: "abc"), now: Self.start).name == "writeBodyPart(3, total: 3)")
        #expect(machine.bodyPartReady(ByteBuffer(string: "de"), now: Self.start).name == "writeBodyPart(2, total: 5)")
        #expect(machine.bodyEnded().name == "writeBodyEnd")
        #expect(machine.bodyPartReady(ByteBuffer(string: "late"), now: Self.start).name == "none")
        #expect(machine.requestWritten(now: Self.start).name == "reportRequestSent(5)")
        #expect(machine.requestWritten(now: Self.start).name == "none")
    }

    @Test func wholeBodyThatContradictsItsContentLengthFailsBeforeAnythingIsSent() {
        var machine = Self.started(body: 4, declared: 5, expecting: "fail(error(bodyLengthMismatch(declared: 5, sent: 4)), read: false)")
        #expect(!machine.isRunning)
        #expect(machine.requestWritten(now: Self.start).name == "none")
    }

    @Test func streamedBodyLongerThanItsContentLengthFailsAtTheChunkThatOverflows() {
        var machine = Self.started(body: nil, declared: 4)
        #expect(machine.bodyPartReady(ByteBuffer(string: "abc"), now: Self.start).name == "writeBodyPart(3, total: 3)")
        #expect(machine.bodyPartReady(ByteBuffer(string: "de"), now: Self.start).name
            == "fail(error(bodyLengthMismatch(declared: 4, sent: 5)), read: false)")
        #expect(!machine.isRunning)
    }

    @Test func streamedBodyShorterThanItsContentLengthFailsAtItsEnd() {
        var machine = Self.started(body: nil, declared: 4)
        #expect(machine.bodyPartReady(ByteBuffer(string: "abc"), now: Self.start).name == "writeBodyPart(3, total: 3)")
        #expect(machine.bodyEnded().name == "fail(error(bodyLengthMismatch(declared: 4, sent: 3)), read: false)")
    }

    @Test func bodyProducerFailureFailsTheExchange() {
        var machine = Self.started(body: nil)
        #expect(machine.bodyFailed(CancellationError()).name == "fail(error(CancellationError()), read: false)")
        #expect(!machine.isRunning)
    }

    /// The server answers (a 413, say) while the body is still going out: the response is
    /// delivered whole, and the connection is not reused, since the request was not all sent.
    @Test func earlyResponseWhileTheBodyStreamsFinishesNotReusable() {
        var machine = Self.started(body: nil)
        #expect(machine.bodyPartReady(ByteBuffer(string: "abc"), now: Self.start).name == "writeBodyPart(3, total: 3)")
        #expect(machine.partRead(Self.head(.payloadTooLarge), now: Self.start).name == "deliverHead(413)")
        #expect(machine.partRead(.end(nil), now: Self.start).name == "deliverEnd")
        #expect(machine.responseEndDelivered().name == "none")
        #expect(machine.readComplete().name == "finish(reusable: false, read: false)")
        #expect(machine.bodyPartReady(ByteBuffer(string: "more"), now: Self.start).name == "none")
        #expect(machine.bodyEnded().name == "none")
    }

    // MARK: Keep-alive

    @Test func requestAskingCloseIsNotReusable() {
        var machine = Self.started(requestClosesConnection: true)
        _ = machine.requestWritten(now: Self.start)
        #expect(Self.receiveWholeResponse(&machine, head: Self.head(.ok)) == "finish(reusable: false, read: false)")
    }

    @Test func responseWithoutKeepAliveIsNotReusable() {
        var machine = Self.sent()
        #expect(Self.receiveWholeResponse(&machine, head: Self.head(.ok, version: .http1_0)) == "finish(reusable: false, read: false)")
        machine = Self.sent()
        #expect(Self.receiveWholeResponse(&machine, head: Self.head(.ok, headers: ["connection": "close"])) == "finish(reusable: false, read: false)")
    }

    /// NIO says no keep-alive for HTTP/2, yet a stream that ended both ways is a clean end.
    @Test func http2ResponseIsAReusableEnd() {
        var machine = Self.sent()
        #expect(Self.receiveWholeResponse(&machine, head: Self.head(.ok, version: .http2)) == "finish(reusable: true, read: false)")
    }

    /// Head, end and read complete; the last action.
    static func receiveWholeResponse(_ machine: inout Machine, head: HTTPClientResponsePart) -> String {
        _ = machine.partRead(head, now: start)
        _ = machine.partRead(.end(nil), now: start)
        _ = machine.responseEndDelivered()
        return machine.readComplete().name
    }

    // MARK: Past the end

    @Test func bytesPastTheEndInTheSameReadMakeTheConnectionNotReusable() {
        var machine = Self.sent()
        _ = machine.partRead(Self.head(.ok), now: Self.start)
        _ = machine.partRead(.end(nil), now: Self.start)
        #expect(machine.responseEndDelivered().name == "none")
        #expect(machine.partRead(Self.head(.ok), now: Self.start).name == "none")
        #expect(machine.partRead(Self.body, now: Self.start).name == "none")
        #expect(machine.readComplete().name == "finish(reusable: false, read: false)")
    }

    @Test func malformedBytesPastTheEndFinishTheExchangeNotReusable() {
        var machine = Self.sent()
        _ = machine.partRead(Self.head(.ok), now: Self.start)
        _ = machine.partRead(.end(nil), now: Self.start)
        _ = machine.responseEndDelivered()
        #expect(machine.errorCaught(HTTPParserError.invalidConstant, isMalformedResponse: true).name == "finish(reusable: false, read: false)")
    }

    @Test func connectionClosedRightAfterTheEndFinishesTheExchange() {
        var machine = Self.sent()
        _ = machine.partRead(Self.head(.ok), now: Self.start)
        _ = machine.partRead(.end(nil), now: Self.start)
        _ = machine.responseEndDelivered()
        #expect(machine.channelInactive().name == "finish(reusable: true, read: false)")
    }

    // MARK: Pause and resume

    @Test func partsReadWhilePausedAreHeldAndDeliveredInOrderOnResume() {
        var machine = Self.sent()
        machine.consumerPaused()
        #expect(machine.isConsumerPaused)
        #expect(machine.partRead(Self.head(.ok), now: Self.start).name == "none")
        #expect(machine.readRequested().name == "none")
        #expect(machine.nextHeldPart().name == "none")
        #expect(machine.consumerResumed(now: Self.start) == true)
        // A part read after the resume queues behind the held ones.
        #expect(machine.partRead(Self.body, now: Self.start).name == "none")
        #expect(machine.partRead(.end(nil), now: Self.start).name == "none")
        #expect(machine.heldParts == 3)
        #expect(machine.readComplete().name == "none")

        #expect(machine.nextHeldPart().name == "deliverHead(200)")
        // The delivery paused the consumer: the rest waits.
        machine.consumerPaused()
        #expect(machine.nextHeldPart().name == "none")
        #expect(machine.heldParts == 2)
        #expect(machine.consumerResumed(now: Self.start) == true)
        #expect(machine.nextHeldPart().name == "deliverBody(2)")
        #expect(machine.nextHeldPart().name == "deliverEnd")
        // Delivered from the held parts, not a read: it finishes at once, with the held read.
        #expect(machine.responseEndDelivered().name == "finish(reusable: true, read: true)")
        #expect(machine.heldParts == 0)
    }

    @Test func readHeldBackWhilePausedIsDueOnResume() {
        var machine = Self.sent()
        #expect(machine.readRequested().name == "read")
        machine.consumerPaused()
        #expect(machine.readRequested().name == "none")
        #expect(machine.nextHeldPart().name == "none")
        #expect(machine.consumerResumed(now: Self.start) == true)
        #expect(machine.nextHeldPart().name == "read")
        #expect(machine.nextHeldPart().name == "none")
    }

    /// The flag follows the last call, whatever came before: a repeated pause or resume changes
    /// nothing, and only a resume of a paused consumer asks for the held parts.
    @Test func pausedFlagFollowsTheLastCall() {
        var machine = Self.sent()
        #expect(machine.consumerResumed(now: Self.start) == false)
        machine.consumerPaused()
        machine.consumerPaused()
        #expect(machine.isConsumerPaused)
        #expect(machine.consumerResumed(now: Self.start) == true)
        #expect(!machine.isConsumerPaused)
        #expect(machine.consumerResumed(now: Self.start) == false)
        #expect(machine.partRead(Self.head(.ok), now: Self.start).name == "deliverHead(200)")
    }

    /// A consumer that paused while its exchange waited in the pool, or before a retry, starts
    /// paused: nothing is delivered or read until it resumes.
    @Test func exchangeStartedPausedHoldsEverythingUntilResumed() {
        var machine = Machine()
        _ = machine.start(.init(reused: false, requestClosesConnection: false, asksUpgrade: false, sendsAbsoluteForm: false,
                                wholeBodyLength: 0, declaredBodyLength: nil, idleTimeout: Self.idleTimeout, deadline: nil,
                                now: Self.start, consumerPaused: true))
        #expect(machine.isConsumerPaused)
        _ = machine.requestWritten(now: Self.start)
        #expect(machine.partRead(Self.head(.ok), now: Self.start).name == "none")
        #expect(machine.readRequested().name == "none")
        #expect(machine.idleTimerFired(now: Self.start + .seconds(30)).name == "armIdleTimer(+40s)")
        #expect(machine.consumerResumed(now: Self.start + .seconds(31)) == true)
        #expect(machine.nextHeldPart().name == "deliverHead(200)")
        #expect(machine.nextHeldPart().name == "read")
    }

    /// The flag belongs to the running exchange: one that ends takes it along, and a pause with
    /// no exchange running does nothing (the exchange remembers it for its start).
    @Test func pausedFlagEndsWithItsExchange() {
        var machine = Self.sent()
        machine.consumerPaused()
        _ = machine.fail(.cancelled)
        #expect(!machine.isConsumerPaused)
        machine.consumerPaused()
        #expect(!machine.isConsumerPaused)
        _ = machine.start(.init(reused: true, requestClosesConnection: false, asksUpgrade: false, sendsAbsoluteForm: false,
                                wholeBodyLength: 0, declaredBodyLength: nil, idleTimeout: Self.idleTimeout, deadline: nil,
                                now: Self.start))
        #expect(!machine.isConsumerPaused)
        #expect(machine.readRequested().name == "read")
    }

    @Test func interimResponsesHeldAreSkippedOnResume() {
        var machine = Self.sent()
        machine.consumerPaused()
        _ = machine.partRead(Self.head(.continue), now: Self.start)
        _ = machine.partRead(.end(nil), now: Self.start)
        _ = machine.partRead(Self.head(.ok), now: Self.start)
        _ = machine.consumerResumed(now: Self.start)
        #expect(machine.nextHeldPart().name == "deliverHead(200)")
    }

    @Test func connectionEndingWhileAWholeResponseIsHeldDeliversItThenDoesNotReuse() {
        var machine = Self.sent()
        machine.consumerPaused()
        for part in [Self.head(.ok), Self.body, .end(nil)] {
            _ = machine.partRead(part, now: Self.start)
        }
        #expect(machine.channelInactive().name == "none")
        _ = machine.consumerResumed(now: Self.start)
        #expect(machine.nextHeldPart().name == "deliverHead(200)")
        #expect(machine.nextHeldPart().name == "deliverBody(2)")
        #expect(machine.nextHeldPart().name == "deliverEnd")
        #expect(machine.responseEndDelivered().name == "finish(reusable: false, read: false)")
    }

    @Test func errorWhileAWholeResponseIsHeldOnlyClosesTheConnection() {
        var machine = Self.sent()
        machine.consumerPaused()
        for part in [Self.head(.ok), .end(nil)] {
            _ = machine.partRead(part, now: Self.start)
        }
        #expect(machine.errorCaught(ChannelError.eof, isMalformedResponse: false).name == "close")
        #expect(machine.isRunning)
    }

    @Test func connectionEndingWhileAPartialResponseIsHeldFailsTheExchange() {
        var machine = Self.sent()
        machine.consumerPaused()
        _ = machine.partRead(Self.head(.ok), now: Self.start)
        _ = machine.readRequested()
        #expect(machine.channelInactive().name == "failConnection(eof, beforeResponse: true, reused: false, closes: false, read: true)")
        #expect(machine.heldParts == 0)
    }

    @Test func garbageHeldAfterTheEndMakesTheConnectionNotReusable() {
        var machine = Self.sent()
        machine.consumerPaused()
        for part in [Self.head(.ok), .end(nil), Self.head(.ok)] {
            _ = machine.partRead(part, now: Self.start)
        }
        _ = machine.consumerResumed(now: Self.start)
        _ = machine.nextHeldPart()
        #expect(machine.nextHeldPart().name == "deliverEnd")
        #expect(machine.responseEndDelivered().name == "finish(reusable: false, read: false)")
    }

    // MARK: Interim responses

    @Test func interimResponseThenFinalOnHTTP1() {
        var machine = Self.sent()
        #expect(machine.partRead(Self.head(.continue), now: Self.start).name == "none")
        #expect(machine.partRead(.end(nil), now: Self.start).name == "none")
        #expect(machine.partRead(Self.head(.init(statusCode: 103)), now: Self.start).name == "none")
        #expect(machine.partRead(.end(nil), now: Self.start).name == "none")
        #expect(Self.receiveWholeResponse(&machine, head: Self.head(.ok)) == "finish(reusable: true, read: false)")
    }

    /// swift-nio-http2 delivers no end for an interim head.
    @Test func interimResponseThenFinalOnHTTP2() {
        var machine = Self.sent()
        #expect(machine.partRead(Self.head(.init(statusCode: 103), version: .http2), now: Self.start).name == "none")
        #expect(Self.receiveWholeResponse(&machine, head: Self.head(.ok, version: .http2)) == "finish(reusable: true, read: false)")
    }

    /// An interim response is a response byte: a reused connection lost after it is not retried.
    @Test func connectionLostAfterAnInterimResponseIsNotBeforeTheResponse() {
        var machine = Self.started(reused: true)
        _ = machine.requestWritten(now: Self.start)
        _ = machine.partRead(Self.head(.continue), now: Self.start)
        #expect(machine.channelInactive().name == "failConnection(eof, beforeResponse: false, reused: true, closes: false, read: false)")
    }

    @Test func reusedConnectionLostBeforeAnyResponseByteSaysSo() {
        var machine = Self.started(reused: true)
        _ = machine.requestWritten(now: Self.start)
        #expect(machine.channelInactive().name == "failConnection(eof, beforeResponse: true, reused: true, closes: false, read: false)")
        #expect(machine.channelInactive().name == "none")
    }

    // MARK: Upgrades and proxies

    @Test func acceptedUpgradeSwitchesProtocolsAtTheEndOfThe101() {
        var machine = Self.started(asksUpgrade: true)
        _ = machine.requestWritten(now: Self.start)
        let action = machine.partRead(Self.head(.switchingProtocols), now: Self.start)
        #expect(action.name == "checkUpgrade(101)")
        guard case let .checkUpgrade(head) = action else { return }
        machine.upgradeAccepted(head)
        #expect(machine.partRead(.end(nil), now: Self.start).name == "switchProtocols(101, read: false)")
        #expect(!machine.isRunning)
        #expect(machine.readComplete().name == "none")
    }

    @Test func rejectedUpgradeFailsTheExchange() {
        var machine = Self.started(asksUpgrade: true)
        _ = machine.requestWritten(now: Self.start)
        #expect(machine.partRead(Self.head(.switchingProtocols), now: Self.start).name == "checkUpgrade(101)")
        #expect(machine.upgradeRejected("no accept").name == "fail(upgradeRejected(no accept), read: false)")
        #expect(!machine.isRunning)
    }

    @Test func upgradeAnsweredWithAnOrdinaryResponseIsAnOrdinaryResponse() {
        var machine = Self.started(asksUpgrade: true)
        _ = machine.requestWritten(now: Self.start)
        #expect(Self.receiveWholeResponse(&machine, head: Self.head(.forbidden)) == "finish(reusable: true, read: false)")
    }

    /// A 101 the request did not ask for is passed on, and the connection cannot be reused.
    @Test func unaskedSwitchingProtocolsIsDeliveredAndNotReusable() {
        var machine = Self.sent()
        #expect(machine.partRead(Self.head(.switchingProtocols), now: Self.start).name == "deliverHead(101)")
        _ = machine.partRead(.end(nil), now: Self.start)
        _ = machine.responseEndDelivered()
        #expect(machine.readComplete().name == "finish(reusable: false, read: false)")
    }

    @Test func proxyAuthenticationRequiredInAbsoluteFormFailsAsForATunnel() {
        var machine = Self.started(sendsAbsoluteForm: true)
        #expect(machine.partRead(Self.head(.proxyAuthenticationRequired), now: Self.start).name
            == "fail(error(proxyAuthenticationRequired), read: false)")
        machine = Self.sent()
        #expect(machine.partRead(Self.head(.proxyAuthenticationRequired), now: Self.start).name == "deliverHead(407)")
    }

    @Test func bodyThatCannotBeDecodedFailsTheConnection() {
        var machine = Self.sent()
        _ = machine.partRead(Self.head(.ok), now: Self.start)
        #expect(machine.decodingFailed(ChannelError.eof).name == "failConnection(eof, beforeResponse: false, reused: false, closes: true, read: false)")
    }

    // MARK: Timers

    @Test func idleTimerRearmsForTheLastActivityThenTimesOut() {
        var machine = Self.sent()
        let later = Self.start + .seconds(4)
        machine.bytesArrived(now: later)
        #expect(machine.idleTimerFired(now: Self.start + .seconds(10)).name == "armIdleTimer(+14s)")
        #expect(machine.idleTimerFired(now: Self.start + .seconds(14)).name == "fail(timedOut, read: false)")
        #expect(machine.idleTimerFired(now: Self.start + .seconds(20)).name == "none")
    }

    /// On HTTP/2 no observer reports bytes: each part read is activity. Once an observer reports
    /// bytes, parts are not.
    @Test func partsReadAreActivityUnlessBytesAreObserved() {
        var machine = Self.sent()
        _ = machine.partRead(Self.head(.ok), now: Self.start + .seconds(3))
        #expect(machine.idleTimerFired(now: Self.start + .seconds(10)).name == "armIdleTimer(+13s)")
        machine.bytesArrived(now: Self.start + .seconds(5))
        _ = machine.partRead(Self.body, now: Self.start + .seconds(8))
        #expect(machine.idleTimerFired(now: Self.start + .seconds(13)).name == "armIdleTimer(+15s)")
    }

    @Test func pausedConsumerIsNotAQuietServer() {
        var machine = Self.sent()
        machine.consumerPaused()
        #expect(machine.idleTimerFired(now: Self.start + .seconds(30)).name == "armIdleTimer(+40s)")
        #expect(machine.consumerResumed(now: Self.start + .seconds(31)) == true)
        #expect(machine.idleTimerFired(now: Self.start + .seconds(40)).name == "armIdleTimer(+41s)")
    }

    @Test func sendingIsActivity() {
        var machine = Self.started(body: nil)
        _ = machine.bodyPartReady(ByteBuffer(string: "a"), now: Self.start + .seconds(6))
        #expect(machine.idleTimerFired(now: Self.start + .seconds(10)).name == "armIdleTimer(+16s)")
        _ = machine.bodyEnded()
        _ = machine.requestWritten(now: Self.start + .seconds(12))
        #expect(machine.idleTimerFired(now: Self.start + .seconds(16)).name == "armIdleTimer(+22s)")
    }

    @Test func deadlineRearmsUntilDueThenTimesOut() {
        var machine = Self.started(deadline: Self.start + .seconds(30))
        #expect(machine.deadlineTimerFired(now: Self.start + .seconds(29)).name == "armDeadlineTimer(+30s)")
        #expect(machine.deadlineTimerFired(now: Self.start + .seconds(30)).name == "fail(timedOut, read: false)")
        var unbounded = Self.sent()
        #expect(unbounded.deadlineTimerFired(now: Self.start + .seconds(3600)).name == "none")
    }

    // MARK: Cancel

    @Test func cancelInEachPhaseFailsTheRunningExchangeOnly() {
        var sendingBody = Self.started(body: nil)
        #expect(sendingBody.fail(.cancelled).name == "fail(cancelled, read: false)")
        var awaitingHead = Self.sent()
        #expect(awaitingHead.fail(.cancelled).name == "fail(cancelled, read: false)")
        var receiving = Self.sent()
        _ = receiving.partRead(Self.head(.ok), now: Self.start)
        #expect(receiving.fail(.cancelled).name == "fail(cancelled, read: false)")
        var paused = Self.sent()
        paused.consumerPaused()
        _ = paused.partRead(Self.head(.ok), now: Self.start)
        _ = paused.readRequested()
        #expect(paused.fail(.cancelled).name == "fail(cancelled, read: true)")
        #expect(paused.heldParts == 0)
        #expect(paused.fail(.cancelled).name == "none")
        var endPending = Self.sent()
        _ = endPending.partRead(.end(nil), now: Self.start)
        _ = endPending.responseEndDelivered()
        #expect(endPending.fail(.cancelled).name == "fail(cancelled, read: false)")
        #expect(endPending.readComplete().name == "none")
        var idle = Machine()
        #expect(idle.fail(.cancelled).name == "none")
    }

    // MARK: Unsolicited input

    @Test func bytesBeforeTheFirstExchangeAskWhetherToKeepThem() {
        var machine = Machine()
        #expect(machine.partRead(Self.head(.ok), now: Self.start).name == "askToKeepUnsolicitedInput")
        machine.unsolicitedInputKept()
        #expect(machine.serverSpokeFirst)
        #expect(machine.partRead(Self.body, now: Self.start).name == "none")
        #expect(machine.errorCaught(HTTPParserError.invalidConstant, isMalformedResponse: true).name == "none")
    }

    @Test func bytesBetweenExchangesCloseTheConnection() {
        var machine = Self.sent()
        _ = Self.receiveWholeResponse(&machine, head: Self.head(.ok))
        #expect(machine.partRead(Self.head(.requestTimeout), now: Self.start).name == "close")
        #expect(machine.errorCaught(HTTPParserError.invalidConstant, isMalformedResponse: true).name == "close")
        #expect(machine.errorCaught(ChannelError.eof, isMalformedResponse: false).name == "close")
        #expect(machine.channelInactive().name == "none")
        machine.consumerPaused()
        #expect(machine.readRequested().name == "read")
    }

    @Test func nextExchangeStartsClean() {
        var machine = Self.sent()
        machine.consumerPaused()
        _ = machine.partRead(Self.head(.ok), now: Self.start)
        _ = machine.fail(.cancelled)
        let action = machine.start(.init(reused: true, requestClosesConnection: false, asksUpgrade: false, sendsAbsoluteForm: false,
                                         wholeBodyLength: 0, declaredBodyLength: nil, idleTimeout: Self.idleTimeout, deadline: nil,
                                         now: Self.start))
        #expect(action.name == "sendWholeRequest")
        #expect(machine.startedExchanges == 2)
        #expect(machine.heldParts == 0)
        #expect(machine.partRead(Self.head(.ok), now: Self.start).name == "deliverHead(200)")
    }
}

extension ExchangeStateMachine.Action {
    /// The action in a few words, for the expectations above.
    var name: String {
        switch self {
        case .none: "none"
        case .read: "read"
        case .close: "close"
        case .sendWholeRequest: "sendWholeRequest"
        case .sendHeadThenStreamBody: "sendHeadThenStreamBody"
        case let .writeBodyPart(chunk, total): "writeBodyPart(\(chunk.readableBytes), total: \(total))"
        case .writeBodyEnd: "writeBodyEnd"
        case let .reportRequestSent(bodyBytes): "reportRequestSent(\(bodyBytes))"
        case let .deliverHead(head): "deliverHead(\(head.status.code))"
        case let .deliverBody(buffer): "deliverBody(\(buffer.readableBytes))"
        case .deliverEnd: "deliverEnd"
        case let .checkUpgrade(head): "checkUpgrade(\(head.status.code))"
        case let .switchProtocols(head, read): "switchProtocols(\(head.status.code), read: \(read))"
        case let .finish(reusable, read): "finish(reusable: \(reusable), read: \(read))"
        case let .fail(failure, read): "fail(\(failure.name), read: \(read))"
        case let .failConnection(failure, read):
            "failConnection(\(failure.error is ChannelError ? "eof" : "\(failure.error)"), beforeResponse: \(failure.beforeResponse), "
                + "reused: \(failure.onReusedConnection), closes: \(failure.closesChannel), read: \(read))"
        case .askToKeepUnsolicitedInput: "askToKeepUnsolicitedInput"
        case let .armIdleTimer(due): "armIdleTimer(+\(Self.seconds(due)))"
        case let .armDeadlineTimer(due): "armDeadlineTimer(+\(Self.seconds(due)))"
        }
    }

    /// Seconds from the tests' start, as "14s".
    private static func seconds(_ deadline: NIODeadline) -> String {
        "\((deadline - ExchangeStateMachineTests.start).nanoseconds / 1_000_000_000)s"
    }
}

extension ExchangeStateMachine.Failure {
    var name: String {
        switch self {
        case .timedOut: "timedOut"
        case .cancelled: "cancelled"
        case let .upgradeRejected(reason): "upgradeRejected(\(reason))"
        case let .error(error): "error(\(error))"
        case let .urlError(error): "urlError(\(error.code.rawValue))"
        }
    }
}

import Foundation
import HTTPTypes
import Lupine
@testable import LupineOpenAPI
import Testing

/// The decisions of the OpenAPI transport's response state machine, event by event. Waiters are
/// plain numbers: the machine only hands them back.
@Suite struct ResponseStreamStateMachineTests {
    typealias Machine = ResponseStreamStateMachine<Int, Int>

    private let ok = HTTPResponse(status: .ok)
    private let unavailable = HTTPResponse(status: .serviceUnavailable)

    /// Counts the releases a test's parts get.
    private final class Releases: Sendable {
        let count = Locked(0)
        var release: @Sendable () -> Void { { self.count.withValue { $0 += 1 } } }
    }

    private func deliveredHead(_ effects: Machine.Effects) -> HTTPResponse? {
        guard let (_, result) = effects.response, case let .success(delivery) = result else { return nil }
        return delivery.head
    }

    @Test func anAcceptableHeadGoesToTheCallerAndPartsWaitForTheCallerToBeReleased() {
        var machine = Machine(heldBodyLimit: 100)
        _ = machine.responseRequested(by: 1)
        let (allow, effects) = machine.headArrived(ok, isAcceptable: true, streamsBody: true)
        #expect(allow)
        #expect(deliveredHead(effects) == ok)
        let releases = Releases()
        #expect(machine.partArrived(Data("ab".utf8), release: releases.release).releases.isEmpty)
        let (event, taken) = machine.nextBodyEvent(waiter: nil)
        guard case let .part(data)? = event else {
            Issue.record("expected a part, got \(String(describing: event))")
            return
        }
        #expect(data == Data("ab".utf8))
        taken.releases.forEach { $0() }
        #expect(releases.count.current == 1)
    }

    @Test func aWaitingCallerGetsThePartAtOnceAndTheEndWithTheRequest() {
        var machine = Machine(heldBodyLimit: 100)
        _ = machine.responseRequested(by: 1)
        _ = machine.headArrived(ok, isAcceptable: true, streamsBody: true)
        #expect(machine.nextBodyEvent(waiter: 7).event == nil)
        let releases = Releases()
        let effects = machine.partArrived(Data("x".utf8), release: releases.release)
        #expect(effects.body?.0 == 7)
        #expect(effects.releases.count == 1)
        #expect(machine.nextBodyEvent(waiter: 8).event == nil)
        let attemptEnded = machine.attemptCompleted(error: nil)
        #expect(attemptEnded.body == nil)
        #expect(!attemptEnded.cancelRequest)
        // A part the request still held when it reported the attempt's end comes first.
        #expect(machine.partArrived(Data("y".utf8), release: releases.release).body?.0 == 8)
        #expect(machine.nextBodyEvent(waiter: 9).event == nil)
        guard case .end? = machine.requestCompleted(error: nil).body?.1 else {
            Issue.record("expected the end")
            return
        }
    }

    @Test func anUnacceptableResponseIsHeldAndAHeadAfterItReplacesIt() {
        var machine = Machine(heldBodyLimit: 100)
        _ = machine.responseRequested(by: 1)
        let held = machine.headArrived(unavailable, isAcceptable: false, streamsBody: true)
        #expect(held.allow)
        #expect(held.effects.response == nil)
        let releases = Releases()
        // Held parts are released at once: the retriers decide only once the body is complete.
        #expect(machine.partArrived(Data("busy".utf8), release: releases.release).releases.count == 1)
        _ = machine.attemptCompleted(error: nil)
        #expect(!machine.hasDeliveredResponse)
        // The retry's answer.
        let retried = machine.headArrived(ok, isAcceptable: true, streamsBody: true)
        #expect(deliveredHead(retried.effects) == ok)
        _ = machine.attemptCompleted(error: nil)
        _ = machine.requestCompleted(error: nil)
        guard case .end? = machine.nextBodyEvent(waiter: nil).event else {
            Issue.record("the held body leaked into the retry's")
            return
        }
    }

    @Test func theHeldResponseGoesToTheCallerWhenTheRequestFailsByItsStatus() {
        var machine = Machine(heldBodyLimit: 100)
        _ = machine.responseRequested(by: 1)
        _ = machine.headArrived(unavailable, isAcceptable: false, streamsBody: true)
        _ = machine.partArrived(Data("busy".utf8), release: {})
        _ = machine.attemptCompleted(error: nil)
        let effects = machine.requestCompleted(error: .responseValidationFailed(reason: .unacceptableStatusCode(code: 503)))
        #expect(deliveredHead(effects) == unavailable)
        guard case let .part(data)? = machine.nextBodyEvent(waiter: nil).event else {
            Issue.record("expected the held body")
            return
        }
        #expect(data == Data("busy".utf8))
        guard case .end? = machine.nextBodyEvent(waiter: nil).event else {
            Issue.record("expected the end")
            return
        }
    }

    @Test func aRetryThatFailsLaterThrowsItsErrorNotTheHeldResponse() {
        var machine = Machine(heldBodyLimit: 100)
        _ = machine.responseRequested(by: 1)
        _ = machine.headArrived(unavailable, isAcceptable: false, streamsBody: true)
        _ = machine.attemptCompleted(error: nil)
        let effects = machine.requestCompleted(error: .sessionTaskFailed(error: URLError(.cannotConnectToHost)))
        guard let (_, result) = effects.response, case let .failure(error) = result else {
            Issue.record("expected a failure")
            return
        }
        #expect((error as? AFError)?.isSessionTaskError == true)
    }

    @Test func aHeldBodyPastTheLimitGoesToTheCallerAndIsNoLongerRetried() {
        var machine = Machine(heldBodyLimit: 4)
        _ = machine.responseRequested(by: 1)
        _ = machine.headArrived(unavailable, isAcceptable: false, streamsBody: true)
        #expect(machine.partArrived(Data("abc".utf8), release: {}).response == nil)
        let effects = machine.partArrived(Data("def".utf8), release: {})
        #expect(deliveredHead(effects) == unavailable)
        #expect(machine.hasDeliveredResponse)
        guard case let .part(data)? = machine.nextBodyEvent(waiter: nil).event else {
            Issue.record("expected the held parts")
            return
        }
        #expect(data == Data("abcdef".utf8))
    }

    @Test func anAttemptFailingAfterItsResponseWentOutCancelsAndEndsTheBodyWithItsError() {
        var machine = Machine(heldBodyLimit: 100)
        _ = machine.responseRequested(by: 1)
        _ = machine.headArrived(ok, isAcceptable: true, streamsBody: true)
        _ = machine.partArrived(Data("a".utf8), release: {})
        let effects = machine.attemptCompleted(error: AFError.sessionTaskFailed(error: URLError(.networkConnectionLost)))
        #expect(effects.cancelRequest)
        // A retry's head is refused.
        #expect(!machine.headArrived(ok, isAcceptable: true, streamsBody: true).allow)
        // The request ends cancelled; the caller gets the part that came, then the attempt's error.
        _ = machine.requestCompleted(error: .explicitlyCancelled)
        guard case .part? = machine.nextBodyEvent(waiter: nil).event,
              case let .failure(error)? = machine.nextBodyEvent(waiter: nil).event else {
            Issue.record("expected the part, then the error")
            return
        }
        #expect((error as? AFError)?.isSessionTaskError == true)
    }

    @Test func lettingGoOfAnOpenBodyReleasesItsPartsAndCancels() {
        var machine = Machine(heldBodyLimit: 100)
        _ = machine.responseRequested(by: 1)
        _ = machine.headArrived(ok, isAcceptable: true, streamsBody: true)
        _ = machine.partArrived(Data("a".utf8), release: {})
        _ = machine.partArrived(Data("b".utf8), release: {})
        let effects = machine.bodyAbandoned()
        #expect(effects.cancelRequest)
        #expect(effects.releases.count == 2)
        #expect(machine.partArrived(Data("c".utf8), release: {}).releases.count == 1)
    }

    @Test func lettingGoOfAFinishedBodyCancelsNothing() {
        var machine = Machine(heldBodyLimit: 100)
        _ = machine.responseRequested(by: 1)
        _ = machine.headArrived(ok, isAcceptable: true, streamsBody: true)
        _ = machine.attemptCompleted(error: nil)
        _ = machine.requestCompleted(error: nil)
        #expect(!machine.bodyAbandoned().cancelRequest)
    }

    @Test func aResponseWithoutBodyIsNotCancelledWhenLetGo() {
        var machine = Machine(heldBodyLimit: 100)
        _ = machine.responseRequested(by: 1)
        _ = machine.headArrived(ok, isAcceptable: true, streamsBody: false)
        #expect(!machine.bodyAbandoned().cancelRequest)
    }
}

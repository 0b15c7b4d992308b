import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import Testing

/// The state machine's response handlers: the request's lifecycle around its queue of handlers
/// and the hand-over of the exchange's end, each event answered with one action (the queue alone
/// is `ResponseHandlerQueueTests`).
@Suite struct RequestStateMachineResponseHandlerTests {
    private typealias Queue = ResponseHandlerQueueTests

    private static let outcome = AttemptTaskOutcome(error: nil, bytesSent: 0, bytesExpectedToSend: 0,
                                                    bytesReceived: 2, bytesExpectedToReceive: 2)

    @Test func aHandlerAddedBeforeTheRequestRunsMayStartIt() {
        var machine = RequestStateMachine()
        let first = machine.responseHandlerAdded(Queue.awaited("a"))
        _ = machine.resume(setupIsLazy: true)
        let second = machine.responseHandlerAdded(Queue.awaited("b"))
        var cancelled = RequestStateMachine()
        _ = cancelled.cancel()

        #expect(first == .resumeIfAutomatic)
        #expect(second == .nothing)
        #expect(cancelled.responseHandlerAdded(Queue.awaited("c")) == .nothing)
        #expect(machine.responseHandlers.handlers.count == 2)
    }

    @Test func theLastHandlerToCompleteFinishesTheRequest() {
        var machine = RequestStateMachineTests.deciding()
        _ = machine.responseHandlerAdded(Queue.awaited("a"))
        _ = machine.beginFinishing(error: nil)
        let first = Queue.describe(machine.nextResponseHandler())
        let stateWhileRunning = machine.state
        let last = Queue.describe(machine.responseHandlerCompleted(Queue.awaited("a'")))

        #expect(first == "run a")
        #expect(stateWhileRunning == .resumed)
        #expect(last == "drained [a'] + 0 finish handler(s)")
        #expect(machine.isDone)
        #expect(machine.state == .finished)
    }

    @Test func aHandlerAddedToAFinishedRequestRunsNowAndFinishesItAgain() {
        var machine = RequestStateMachineTests.deciding()
        _ = machine.beginFinishing(error: nil)
        _ = machine.nextResponseHandler()
        let added = machine.responseHandlerAdded(Queue.awaited("late"))
        let stateWhileRunning = machine.state
        let next = Queue.describe(machine.nextResponseHandler())
        // A finish handler added while the late handler runs: the request is done, it runs now.
        let finishRunsNow = machine.finishHandlerAdded {}
        let last = Queue.describe(machine.responseHandlerCompleted(Queue.awaited("late'")))

        #expect(added == .runQueueAgain(thenResumeIfAutomatic: false))
        #expect(stateWhileRunning == .resumed)
        #expect(next == "run late")
        #expect(finishRunsNow)
        #expect(last == "drained [late'] + 0 finish handler(s)")
        #expect(machine.state == .finished)
    }

    @Test func aHandlerAddedToAFinishedRequestTheCallerSuspendedMayResumeIt() {
        var machine = RequestStateMachineTests.deciding()
        _ = machine.beginFinishing(error: nil)
        _ = machine.nextResponseHandler()
        _ = machine.responseHandlerAdded(Queue.awaited("late"))
        _ = machine.suspend()

        #expect(machine.responseHandlerAdded(Queue.awaited("later")) == .runQueueAgain(thenResumeIfAutomatic: true))
    }

    @Test func finishHandlersWaitForTheHandlers() {
        var machine = RequestStateMachineTests.deciding()
        let runsNow = machine.finishHandlerAdded {}
        _ = machine.beginFinishing(error: nil)
        let drained = Queue.describe(machine.nextResponseHandler())

        #expect(!runsNow)
        #expect(drained == "drained [] + 1 finish handler(s)")
    }

    @Test func aRetryRunsTheHandlersAgainFromTheFirst() {
        var machine = RequestStateMachineTests.deciding()
        _ = machine.responseHandlerAdded(Queue.awaited("a"))
        _ = machine.responseHandlerAdded(Queue.onQueue("b"))
        _ = machine.beginFinishing(error: nil)
        _ = machine.nextResponseHandler()
        _ = machine.responseHandlerCompleted(Queue.awaited("a'"))
        // b fails and a retrier retries.
        let scheduled = machine.scheduleRetry()
        let begins = machine.beginRetry()
        _ = machine.transferCompleted(error: nil, at: RequestStateMachineTests.date)
        _ = machine.beginFinishing(error: nil)

        #expect(scheduled && begins)
        #expect(Queue.describe(machine.nextResponseHandler()) == "run a")
        #expect(Queue.describe(machine.responseHandlerCompleted(Queue.awaited("a''"))) == "run b")
    }

    @Test func theEndOfAnExchangeFromTheNetworkGoesToTheTaskThatOffered() {
        var machine = RequestStateMachineTests.exchanging()
        let attempt = machine.taskBegins(identifier: 1, originalRequest: RequestStateMachineTests.request)
        let taker = Queue.step("t", awaited: true)
        _ = machine.responseHandlerAdded(.step(taker))
        machine.offerToTakeCompletion(taker)
        let action = Queue.describe(machine.exchangeEnded(Self.outcome, cacheOffer: nil, at: RequestStateMachineTests.date))

        #expect(action == "wake t")
        #expect(machine.takeHandedOverCompletion()?.attempt == attempt)
        #expect(machine.takeHandedOverCompletion() == nil)
    }

    @Test func anEndAnsweredAtOnceIsQueuedEvenWithAnOffer() {
        var machine = RequestStateMachineTests.preparing()
        _ = machine.urlRequestReady(RequestStateMachineTests.request)
        let hop = machine.hopWillStart(isRedirectHop: false) { nil }
        if case let .send(hopID, _) = hop { _ = machine.hopDidStart(hopID, task: IdleTask(), usesNetwork: false) }
        let attempt = machine.taskBegins(identifier: 1, originalRequest: RequestStateMachineTests.request) ?? 0
        let taker = Queue.step("t", awaited: true)
        _ = machine.responseHandlerAdded(.step(taker))
        machine.offerToTakeCompletion(taker)
        let action = Queue.describe(machine.exchangeEnded(Self.outcome, cacheOffer: nil, at: RequestStateMachineTests.date))

        #expect(action == "runOnRootQueue(#\(attempt), answeredAtOnce: true)")
    }

    @Test func anOfferOnceFinishingIsRefusedAndFinishingDropsAnEarlierOne() {
        var refused = RequestStateMachineTests.deciding()
        _ = refused.beginFinishing(error: nil)
        refused.offerToTakeCompletion(Queue.step("late", awaited: true))
        var dropped = RequestStateMachineTests.exchanging()
        dropped.offerToTakeCompletion(Queue.step("t", awaited: true))
        _ = dropped.beginFinishing(error: nil)

        #expect(refused.responseHandlers.completionTaker == nil)
        #expect(dropped.responseHandlers.completionTaker == nil)
    }
}

/// A transport task that does nothing: the machine only keeps it.
private final class IdleTask: TransportTask {
    func cancel() {}
    func pauseReading() {}
    func resumeReading() {}
}

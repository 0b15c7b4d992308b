import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import Testing

/// The ledger of a request's attempts, alone and through the state machine that owns it: each
/// attempt's facts (requests sent, response, times, task) live in one record, without a Session
/// or a socket.
@Suite struct AttemptLedgerTests {
    @Test func anAttemptBeginsWithARecordAndATaskOnceItsURLRequestIsFinal() {
        var machine = RequestStateMachineTests.preparing()
        #expect(machine.ledger.count == 1)
        #expect(machine.ledger.withCurrent { $0.number } == 0)
        // Its setup has not made the URLRequest yet: no task, nothing sent.
        #expect(machine.ledger.lastTaskNumber == nil)
        #expect(machine.ledger.liveTaskNumber == nil)
        #expect(machine.ledger.performedRequests.isEmpty)

        _ = machine.urlRequestReady(Self.request)
        #expect(machine.taskBegins(identifier: 7, originalRequest: Self.request) == 0)
        #expect(machine.ledger.liveTaskNumber == 0)
        #expect(machine.ledger.taskNumbers == [0])
        #expect(machine.ledger.withRecord(0) { $0.task?.identifier } == 7)
        // One task per attempt.
        #expect(machine.taskBegins(identifier: 8, originalRequest: Self.request) == nil)
        #expect(machine.ledger.withRecord(0) { $0.task?.identifier } == 7)
    }

    @Test func aCancelledRequestGetsNoTask() {
        var machine = RequestStateMachineTests.preparing()
        _ = machine.cancel()
        #expect(machine.taskBegins(identifier: 1, originalRequest: Self.request) == nil)
        #expect(machine.ledger.taskNumbers.isEmpty)
    }

    @Test func aRedirectHopReplacesTheAttemptsCurrentRequest() throws {
        var machine = Self.exchanging()
        let first = Self.outgoing("https://example.com/get"), second = Self.outgoing("https://example.com/moved")
        machine.hopWillSend(first)
        #expect(machine.ledger.performedRequests.map(\.url) == [first.url])
        let hop = try #require(machine.hop?.id)
        machine.hopDecided(hop, .follow(second.base))
        _ = machine.hopCompleted(hop)
        _ = machine.hopWillStart(isRedirectHop: true) { nil }
        machine.hopWillSend(second)

        // One entry per attempt: the last hop's, which the task shows as its current request.
        #expect(machine.ledger.performedRequests.map(\.url) == [second.url])
        #expect(machine.ledger.lastPerformedRequest === second)
        #expect(machine.redirectCount == 1)
        let view = Self.view(of: 0, in: machine)
        #expect(view?.currentRequest?.url == second.url)
        #expect(machine.ledger.withRecord(0) { $0.task?.originalRequest.url } == Self.request.url)
    }

    @Test func theTaskShowsTheOriginalRequestUntilAHopIsSent() {
        let machine = Self.exchanging()
        #expect(Self.view(of: 0, in: machine)?.currentRequest?.url == Self.request.url)
        #expect(Self.view(of: 0, in: machine)?.state == .running)
    }

    @Test func completionFreezesTheTasksOutcome() throws {
        var machine = Self.exchanging()
        machine.hopWillSend(Self.outgoing("https://example.com/get"))
        let response = try Self.response()
        machine.responseReceived(response, at: Self.date)
        let outcome = AttemptTaskOutcome(error: .explicitlyCancelled, bytesSent: 1, bytesExpectedToSend: 2,
                                         bytesReceived: 3, bytesExpectedToReceive: 4)
        #expect(machine.taskEnds(outcome) == 0)
        _ = machine.transferCompleted(error: nil, at: Self.date)

        #expect(machine.ledger.liveTaskNumber == nil)
        // The request's counts go on (a retry zeroes them): the completed task keeps its own.
        let view = try #require(Self.view(of: 0, in: machine, counts: (total: 100, completed: 50)))
        #expect(view.state == .completed)
        #expect(view.error?.isExplicitlyCancelledError == true)
        #expect([view.bytesSent, view.bytesExpectedToSend, view.bytesReceived, view.bytesExpectedToReceive] == [1, 2, 3, 4])
        #expect(view.response?.statusCode == 200)
        // A completed task ends once, and a later cancel does not mark it.
        #expect(machine.taskEnds(outcome) == nil)
        _ = machine.cancel()
        #expect(machine.taskFollowsCancel() == nil)
        #expect(machine.ledger.withRecord(0) { $0.task?.isCancelled } == false)
    }

    @Test func aRetryAddsARecordAndTheEarlierOneKeepsItsAttempt() throws {
        var machine = Self.exchanging()
        let first = Self.outgoing("https://example.com/first")
        machine.hopWillSend(first)
        let response = try Self.response()
        machine.responseReceived(response, at: Self.date)
        machine.requestSent(at: Self.date)
        _ = machine.taskEnds(Self.outcome)
        _ = machine.transferCompleted(error: .explicitlyCancelled, at: Self.date)
        let retries = (machine.scheduleRetry(), machine.beginRetry())
        #expect(retries == (true, true))

        #expect(machine.ledger.count == 2)
        #expect(machine.retryCount == 1)
        #expect(machine.ledger.withCurrent { $0.number } == 1)
        #expect(machine.response == nil)
        #expect(machine.timeline.requestSentTime == nil)
        #expect((machine.ledger.withRecord(0) { $0.response } ?? nil) === response)
        #expect(machine.ledger.withRecord(0) { $0.sentTime } == Self.date)
        // The earlier task stays the last one until the retry's URLRequest is final.
        #expect(machine.ledger.lastTaskNumber == 0)
        #expect(machine.ledger.liveTaskNumber == nil)

        _ = machine.urlRequestReady(Self.request)
        #expect(machine.taskBegins(identifier: 2, originalRequest: Self.request) == 1)
        _ = machine.hopWillStart(isRedirectHop: false) { nil }
        let second = Self.outgoing("https://example.com/second")
        machine.hopWillSend(second)
        #expect(machine.ledger.performedRequests.map(\.url) == [first.url, second.url])
        #expect(machine.ledger.taskNumbers == [0, 1])
        #expect(machine.ledger.firstTaskNumber == 0)
        #expect(machine.ledger.lastTaskNumber == 1)
        #expect(machine.ledger.liveTaskNumber == 1)
    }

    @Test func anAttemptWhoseSetupFailedHasARecordButNoTask() {
        var machine = RequestStateMachineTests.preparing()
        _ = machine.transferCompleted(error: .explicitlyCancelled, at: Self.date)
        _ = machine.scheduleRetry()
        _ = machine.beginRetry()
        _ = machine.urlRequestReady(Self.request)
        #expect(machine.taskBegins(identifier: 3, originalRequest: Self.request) == 1)
        #expect(machine.ledger.count == 2)
        #expect(machine.ledger.taskNumbers == [1])
        #expect(machine.ledger.firstTaskNumber == 1)
        #expect(machine.ledger.withRecord(0) { $0.completedTime } == Self.date)
    }

    @Test func cancelMarksTheLiveTask() {
        var machine = Self.exchanging()
        _ = machine.cancel()
        #expect(machine.taskFollowsCancel() == 0)
        #expect(Self.view(of: 0, in: machine)?.state == .canceling)
        #expect(machine.ledger.withRecord(0) { $0.task?.isCancelled } == true)
    }

    @Test func aRedirectResponseShownToAHandlerIsTheLiveTasksUntilAFinalOne() throws {
        var machine = Self.exchanging()
        let url = try #require(Self.request.url)
        let redirect = try #require(HTTPURLResponse(url: url, statusCode: 302, httpVersion: "HTTP/1.1", headerFields: [:]))
        #expect(machine.taskShows(hopResponse: redirect) == 0)
        #expect(Self.view(of: 0, in: machine)?.response?.statusCode == 302)
        machine.responseReceived(try Self.response(), at: Self.date)
        #expect(Self.view(of: 0, in: machine)?.response?.statusCode == 200)
    }

    @Test func theFacadeIsMadeOnceAndOnlyWhenAskedFor() {
        var machine = Self.exchanging()
        #expect(machine.ledger.withRecord(0) { $0.task?.facade == nil } == true)
        var made = 0
        let facade = machine.taskFacade(0) { _ in
            made += 1
            return URLSessionDataTask()
        }
        let again = machine.taskFacade(0) { _ in
            made += 1
            return URLSessionDataTask()
        }
        #expect(made == 1)
        #expect(facade != nil && facade === again)
        #expect(machine.taskFacade(1) { _ in URLSessionDataTask() } == nil)
    }

    @Test func aRetryOfARequestThatNeverBeganAnAttemptStartsFromAnEmptyRecord() {
        var machine = RequestStateMachine()
        _ = machine.resume(setupIsLazy: false)
        _ = machine.beginFinishing(error: .explicitlyCancelled)
        #expect(!machine.hasAttempt)
        let scheduled = machine.scheduleRetry()
        #expect(scheduled)
        #expect(machine.hasAttempt)
        let begun = machine.beginRetry()
        #expect(begun)
        #expect(machine.retryCount == 1)
        #expect(machine.ledger.withCurrent { $0.number } == machine.retryCount)
    }

    // MARK: Fixtures

    static let request = URLRequest(url: URL(string: "https://example.com/get")!)
    static let date = Date(timeIntervalSinceReferenceDate: 1000)
    static let outcome = AttemptTaskOutcome(error: nil, bytesSent: 0, bytesExpectedToSend: 0, bytesReceived: 0,
                                            bytesExpectedToReceive: 0)

    static func outgoing(_ url: String) -> OutgoingRequest {
        OutgoingRequest(base: URLRequest(url: URL(string: url)!), sessionFields: SessionHeaderFields(nil))
    }

    static func response() throws -> LazyHTTPResponse {
        LazyHTTPResponse(url: try #require(request.url), head: TransportResponseHead(statusCode: 200, headerFields: []))
    }

    /// A resumed request whose first attempt's task runs its first hop.
    static func exchanging() -> RequestStateMachine {
        var machine = RequestStateMachineTests.preparing()
        _ = machine.urlRequestReady(request)
        _ = machine.taskBegins(identifier: 1, originalRequest: request)
        _ = machine.hopWillStart(isRedirectHop: false) { nil }
        return machine
    }

    static func view(of number: Int, in machine: RequestStateMachine,
                     counts: (total: Int64, completed: Int64) = (0, 0)) -> AttemptTaskView? {
        let state = machine.state
        return machine.ledger.withRecord(number) { $0.taskView(requestState: state, upload: counts, download: counts) } ?? nil
    }
}

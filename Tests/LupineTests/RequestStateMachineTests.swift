import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import Testing

/// The state machine behind Request, alone: every event in every state (a table), then the
/// data each attempt and hop carries.
@Suite struct RequestStateMachineTests {
    // MARK: The table

    /// The states a request passes through, each reached by the events a request sees.
    static let fixtures: [(name: String, make: @Sendable () -> RequestStateMachine)] = [
        ("initialized idle", { RequestStateMachine() }),
        ("resumed idle (eager)", { var m = RequestStateMachine(); _ = m.resume(setupIsLazy: false); return m }),
        ("initialized preparing", { var m = RequestStateMachine(); _ = m.beginSetup(); return m }),
        ("resumed preparing", { var m = RequestStateMachine(); _ = m.resume(setupIsLazy: true); _ = m.beginSetup(); return m }),
        ("suspended preparing", { var m = preparing(); _ = m.suspend(); return m }),
        ("initialized waitingForResume", { var m = RequestStateMachine(); _ = m.beginSetup(); _ = m.urlRequestReady(request); return m }),
        ("suspended waitingForResume", { var m = RequestStateMachine(); _ = m.suspend(); _ = m.beginSetup(); _ = m.urlRequestReady(request); return m }),
        ("resumed exchanging, hop about to start", { var m = preparing(); _ = m.urlRequestReady(request); return m }),
        ("resumed exchanging, hop on the transport", { exchanging() }),
        ("suspended exchanging", { var m = exchanging(); _ = m.suspend(); return m }),
        ("cancelled exchanging", { var m = exchanging(); _ = m.cancel(); return m }),
        ("resumed deciding", { deciding() }),
        ("resumed waitingToRetry", { var m = deciding(); _ = m.scheduleRetry(); return m }),
        ("cancelled waitingToRetry", { var m = deciding(); _ = m.scheduleRetry(); _ = m.cancel(); return m }),
        ("resumed finishing", { var m = deciding(); _ = m.beginFinishing(error: nil); return m }),
        ("cancelled finishing", { var m = exchanging(); _ = m.cancel(); _ = m.transferCompleted(error: nil, at: date); _ = m.beginFinishing(error: nil); return m }),
        ("finished done", { var m = deciding(); _ = m.beginFinishing(error: nil); m.serializersCompleted(); return m }),
        ("cancelled done", { var m = RequestStateMachine(); _ = m.cancel(); _ = m.beginFinishing(error: nil); m.serializersCompleted(); return m }),
    ]

    /// Every event, applied to a copy of the state; each returns what the machine answered.
    static let events: [(name: String, apply: @Sendable (inout RequestStateMachine) -> String)] = [
        ("resume (lazy)", { describe($0.resume(setupIsLazy: true)) }),
        ("resume (eager)", { describe($0.resume(setupIsLazy: false)) }),
        ("suspend", { "\($0.suspend())" }),
        ("cancel", { describe($0.cancel()) }),
        ("beginSetup", { "\($0.beginSetup())" }),
        ("urlRequestReady", { "\($0.urlRequestReady(request))" }),
        ("hopWillStart", { describe($0.hopWillStart(isRedirectHop: false) { deadline }) }),
        ("hopWillStart (redirect)", { describe($0.hopWillStart(isRedirectHop: true) { deadline }) }),
        ("hopDidStart", { machine in "\(machine.hopDidStart(machine.hop?.id ?? -1, task: StubTask()))" }),
        ("hopCompleted", { machine in machine.hopCompleted(machine.hop?.id ?? -1).map(describe) ?? "nil" }),
        ("transferCompleted", { $0.transferCompleted(error: nil, at: date).map(describe) ?? "no error" }),
        ("scheduleRetry", { "\($0.scheduleRetry())" }),
        ("beginRetry", { "\($0.beginRetry())" }),
        ("beginFinishing", { "\($0.beginFinishing(error: nil))" }),
        ("serializerAdded", { "\($0.serializerAdded())" }),
        ("serializersCompleted", { $0.serializersCompleted(); return "-" }),
    ]

    /// What each event answers in each state, and the state it leaves: "answer -> state".
    static let expected: [String: [String]] = [
        "initialized idle": [
            "resumed(then: startSetup) -> resumed idle",
            "resumed(then: nothing) -> resumed idle",
            "suspended(exchangeIsRunning: false) -> suspended idle",
            "finish -> cancelled idle",
            "true -> initialized preparing#0",
            "abandon -> initialized idle",
            "cancelled -> initialized idle",
            "cancelled -> initialized idle",
            "false -> initialized idle",
            "nil -> initialized idle",
            "no error -> initialized idle",
            "false -> initialized idle",
            "false -> initialized idle",
            "true -> initialized finishing",
            "(mayResume: true, runsNow: false) -> initialized idle",
            "- -> finished done",
        ],
        "resumed idle (eager)": [
            "ignore -> resumed idle",
            "ignore -> resumed idle",
            "suspended(exchangeIsRunning: false) -> suspended idle",
            "finish -> cancelled idle",
            "true -> resumed preparing#0",
            "abandon -> resumed idle",
            "cancelled -> resumed idle",
            "cancelled -> resumed idle",
            "false -> resumed idle",
            "nil -> resumed idle",
            "no error -> resumed idle",
            "false -> resumed idle",
            "false -> resumed idle",
            "true -> resumed finishing",
            "(mayResume: false, runsNow: false) -> resumed idle",
            "- -> finished done",
        ],
        "initialized preparing": [
            "resumed(then: nothing) -> resumed preparing#0",
            "resumed(then: nothing) -> resumed preparing#0",
            "suspended(exchangeIsRunning: false) -> suspended preparing#0",
            "finish -> cancelled preparing#0",
            "false -> initialized preparing#0",
            "waitForResume -> initialized waitingForResume#0",
            "cancelled -> initialized preparing#0",
            "cancelled -> initialized preparing#0",
            "false -> initialized preparing#0",
            "nil -> initialized preparing#0",
            "no error -> initialized deciding#0",
            "false -> initialized preparing#0",
            "false -> initialized preparing#0",
            "true -> initialized finishing#0",
            "(mayResume: true, runsNow: false) -> initialized preparing#0",
            "- -> finished done#0",
        ],
        "resumed preparing": [
            "ignore -> resumed preparing#0",
            "ignore -> resumed preparing#0",
            "suspended(exchangeIsRunning: false) -> suspended preparing#0",
            "finish -> cancelled preparing#0",
            "false -> resumed preparing#0",
            "start -> resumed exchanging#0(hop 1)",
            "cancelled -> resumed preparing#0",
            "cancelled -> resumed preparing#0",
            "false -> resumed preparing#0",
            "nil -> resumed preparing#0",
            "no error -> resumed deciding#0",
            "false -> resumed preparing#0",
            "false -> resumed preparing#0",
            "true -> resumed finishing#0",
            "(mayResume: false, runsNow: false) -> resumed preparing#0",
            "- -> finished done#0",
        ],
        "suspended preparing": [
            "resumed(then: nothing) -> resumed preparing#0",
            "resumed(then: nothing) -> resumed preparing#0",
            "ignore -> suspended preparing#0",
            "finish -> cancelled preparing#0",
            "false -> suspended preparing#0",
            "waitForResume -> suspended waitingForResume#0",
            "cancelled -> suspended preparing#0",
            "cancelled -> suspended preparing#0",
            "false -> suspended preparing#0",
            "nil -> suspended preparing#0",
            "no error -> suspended deciding#0",
            "false -> suspended preparing#0",
            "false -> suspended preparing#0",
            "true -> suspended finishing#0",
            "(mayResume: true, runsNow: false) -> suspended preparing#0",
            "- -> finished done#0",
        ],
        "initialized waitingForResume": [
            "resumed(then: startExchange(https://example.com/get)) -> resumed exchanging#0(hop 1)",
            "resumed(then: startExchange(https://example.com/get)) -> resumed exchanging#0(hop 1)",
            "suspended(exchangeIsRunning: false) -> suspended waitingForResume#0",
            "finish -> cancelled waitingForResume#0",
            "false -> initialized waitingForResume#0",
            "abandon -> initialized waitingForResume#0",
            "cancelled -> initialized waitingForResume#0",
            "cancelled -> initialized waitingForResume#0",
            "false -> initialized waitingForResume#0",
            "nil -> initialized waitingForResume#0",
            "no error -> initialized deciding#0",
            "false -> initialized waitingForResume#0",
            "false -> initialized waitingForResume#0",
            "true -> initialized finishing#0",
            "(mayResume: true, runsNow: false) -> initialized waitingForResume#0",
            "- -> finished done#0",
        ],
        "suspended waitingForResume": [
            "resumed(then: startExchange(https://example.com/get)) -> resumed exchanging#0(hop 1)",
            "resumed(then: startExchange(https://example.com/get)) -> resumed exchanging#0(hop 1)",
            "ignore -> suspended waitingForResume#0",
            "finish -> cancelled waitingForResume#0",
            "false -> suspended waitingForResume#0",
            "abandon -> suspended waitingForResume#0",
            "cancelled -> suspended waitingForResume#0",
            "cancelled -> suspended waitingForResume#0",
            "false -> suspended waitingForResume#0",
            "nil -> suspended waitingForResume#0",
            "no error -> suspended deciding#0",
            "false -> suspended waitingForResume#0",
            "false -> suspended waitingForResume#0",
            "true -> suspended finishing#0",
            "(mayResume: true, runsNow: false) -> suspended waitingForResume#0",
            "- -> finished done#0",
        ],
        "resumed exchanging, hop about to start": [
            "ignore -> resumed exchanging#0(hop 1)",
            "ignore -> resumed exchanging#0(hop 1)",
            "suspended(exchangeIsRunning: true) -> suspended exchanging#0(hop 1)",
            "cancelExchange(no task) -> cancelled exchanging#0(hop 1)",
            "false -> resumed exchanging#0(hop 1)",
            "abandon -> resumed exchanging#0(hop 1)",
            "send(hop 1, deadline) -> resumed exchanging#0(hop 1)",
            "send(hop 2, deadline) -> resumed exchanging#0(hop 2)",
            "false -> resumed exchanging#0(hop 1, task)",
            "deliver -> resumed exchanging#0(hop 1)",
            "no error -> resumed deciding#0",
            "false -> resumed exchanging#0(hop 1)",
            "false -> resumed exchanging#0(hop 1)",
            "true -> resumed finishing#0",
            "(mayResume: false, runsNow: false) -> resumed exchanging#0(hop 1)",
            "- -> finished done#0",
        ],
        "resumed exchanging, hop on the transport": [
            "ignore -> resumed exchanging#0(hop 1, task)",
            "ignore -> resumed exchanging#0(hop 1, task)",
            "suspended(exchangeIsRunning: true) -> suspended exchanging#0(hop 1, task)",
            "cancelExchange(task) -> cancelled exchanging#0(hop 1, task)",
            "false -> resumed exchanging#0(hop 1, task)",
            "abandon -> resumed exchanging#0(hop 1, task)",
            "send(hop 2, deadline) -> resumed exchanging#0(hop 2)",
            "send(hop 2, deadline) -> resumed exchanging#0(hop 2)",
            "false -> resumed exchanging#0(hop 1, task)",
            "deliver -> resumed exchanging#0(hop 1)",
            "no error -> resumed deciding#0",
            "false -> resumed exchanging#0(hop 1, task)",
            "false -> resumed exchanging#0(hop 1, task)",
            "true -> resumed finishing#0",
            "(mayResume: false, runsNow: false) -> resumed exchanging#0(hop 1, task)",
            "- -> finished done#0",
        ],
        "suspended exchanging": [
            "resumed(then: resumeExchange) -> resumed exchanging#0(hop 1, task)",
            "resumed(then: resumeExchange) -> resumed exchanging#0(hop 1, task)",
            "ignore -> suspended exchanging#0(hop 1, task)",
            "cancelExchange(task) -> cancelled exchanging#0(hop 1, task)",
            "false -> suspended exchanging#0(hop 1, task)",
            "abandon -> suspended exchanging#0(hop 1, task)",
            "send(hop 2, deadline) -> suspended exchanging#0(hop 2)",
            "send(hop 2, deadline) -> suspended exchanging#0(hop 2)",
            "false -> suspended exchanging#0(hop 1, task)",
            "deliver -> suspended exchanging#0(hop 1)",
            "no error -> suspended deciding#0",
            "false -> suspended exchanging#0(hop 1, task)",
            "false -> suspended exchanging#0(hop 1, task)",
            "true -> suspended finishing#0",
            "(mayResume: true, runsNow: false) -> suspended exchanging#0(hop 1, task)",
            "- -> finished done#0",
        ],
        "cancelled exchanging": [
            "ignore -> cancelled exchanging#0(hop 1, task)",
            "ignore -> cancelled exchanging#0(hop 1, task)",
            "ignore -> cancelled exchanging#0(hop 1, task)",
            "ignore -> cancelled exchanging#0(hop 1, task)",
            "false -> cancelled exchanging#0(hop 1, task)",
            "abandon -> cancelled exchanging#0(hop 1, task)",
            "cancelled -> cancelled exchanging#0(hop 1, task)",
            "cancelled -> cancelled exchanging#0(hop 1, task)",
            "true -> cancelled exchanging#0(hop 1, task)",
            "deliver -> cancelled exchanging#0(hop 1)",
            "explicitlyCancelled -> cancelled deciding#0",
            "false -> cancelled exchanging#0(hop 1, task)",
            "false -> cancelled exchanging#0(hop 1, task)",
            "true -> cancelled finishing#0",
            "(mayResume: false, runsNow: false) -> cancelled exchanging#0(hop 1, task)",
            "- -> cancelled done#0",
        ],
        "resumed deciding": [
            "ignore -> resumed deciding#0",
            "ignore -> resumed deciding#0",
            "suspended(exchangeIsRunning: false) -> suspended deciding#0",
            "finish -> cancelled deciding#0",
            "false -> resumed deciding#0",
            "abandon -> resumed deciding#0",
            "cancelled -> resumed deciding#0",
            "cancelled -> resumed deciding#0",
            "false -> resumed deciding#0",
            "nil -> resumed deciding#0",
            "no error -> resumed deciding#0",
            "true -> resumed waitingToRetry#0",
            "false -> resumed deciding#0",
            "true -> resumed finishing#0",
            "(mayResume: false, runsNow: false) -> resumed deciding#0",
            "- -> finished done#0",
        ],
        "resumed waitingToRetry": [
            "ignore -> resumed waitingToRetry#0",
            "ignore -> resumed waitingToRetry#0",
            "suspended(exchangeIsRunning: false) -> suspended waitingToRetry#0",
            "finish -> cancelled waitingToRetry#0",
            "false -> resumed waitingToRetry#0",
            "abandon -> resumed waitingToRetry#0",
            "cancelled -> resumed waitingToRetry#0",
            "cancelled -> resumed waitingToRetry#0",
            "false -> resumed waitingToRetry#0",
            "nil -> resumed waitingToRetry#0",
            "no error -> resumed waitingToRetry#0",
            "false -> resumed waitingToRetry#0",
            "true -> resumed preparing#1",
            "true -> resumed finishing#0",
            "(mayResume: false, runsNow: false) -> resumed waitingToRetry#0",
            "- -> finished done#0",
        ],
        "cancelled waitingToRetry": [
            "ignore -> cancelled waitingToRetry#0",
            "ignore -> cancelled waitingToRetry#0",
            "ignore -> cancelled waitingToRetry#0",
            "ignore -> cancelled waitingToRetry#0",
            "false -> cancelled waitingToRetry#0",
            "abandon -> cancelled waitingToRetry#0",
            "cancelled -> cancelled waitingToRetry#0",
            "cancelled -> cancelled waitingToRetry#0",
            "false -> cancelled waitingToRetry#0",
            "nil -> cancelled waitingToRetry#0",
            "explicitlyCancelled -> cancelled waitingToRetry#0",
            "false -> cancelled waitingToRetry#0",
            "false -> cancelled waitingToRetry#0",
            "true -> cancelled finishing#0",
            "(mayResume: false, runsNow: false) -> cancelled waitingToRetry#0",
            "- -> cancelled done#0",
        ],
        "resumed finishing": [
            "ignore -> resumed finishing#0",
            "ignore -> resumed finishing#0",
            "suspended(exchangeIsRunning: false) -> suspended finishing#0",
            "notifyOnly -> cancelled finishing#0",
            "false -> resumed finishing#0",
            "abandon -> resumed finishing#0",
            "cancelled -> resumed finishing#0",
            "cancelled -> resumed finishing#0",
            "false -> resumed finishing#0",
            "nil -> resumed finishing#0",
            "no error -> resumed finishing#0",
            "true -> resumed waitingToRetry#0",
            "false -> resumed finishing#0",
            "false -> resumed finishing#0",
            "(mayResume: false, runsNow: false) -> resumed finishing#0",
            "- -> finished done#0",
        ],
        "cancelled finishing": [
            "ignore -> cancelled finishing#0",
            "ignore -> cancelled finishing#0",
            "ignore -> cancelled finishing#0",
            "ignore -> cancelled finishing#0",
            "false -> cancelled finishing#0",
            "abandon -> cancelled finishing#0",
            "cancelled -> cancelled finishing#0",
            "cancelled -> cancelled finishing#0",
            "false -> cancelled finishing#0",
            "nil -> cancelled finishing#0",
            "explicitlyCancelled -> cancelled finishing#0",
            "false -> cancelled finishing#0",
            "false -> cancelled finishing#0",
            "false -> cancelled finishing#0",
            "(mayResume: false, runsNow: false) -> cancelled finishing#0",
            "- -> cancelled done#0",
        ],
        "finished done": [
            "ignore -> finished done#0",
            "ignore -> finished done#0",
            "ignore -> finished done#0",
            "ignore -> finished done#0",
            "false -> finished done#0",
            "abandon -> finished done#0",
            "cancelled -> finished done#0",
            "cancelled -> finished done#0",
            "false -> finished done#0",
            "nil -> finished done#0",
            "no error -> finished done#0",
            "false -> finished done#0",
            "false -> finished done#0",
            "false -> finished done#0",
            "(mayResume: false, runsNow: true) -> resumed done#0",
            "- -> finished done#0",
        ],
        "cancelled done": [
            "ignore -> cancelled done",
            "ignore -> cancelled done",
            "ignore -> cancelled done",
            "ignore -> cancelled done",
            "false -> cancelled done",
            "abandon -> cancelled done",
            "cancelled -> cancelled done",
            "cancelled -> cancelled done",
            "false -> cancelled done",
            "nil -> cancelled done",
            "explicitlyCancelled -> cancelled done",
            "false -> cancelled done",
            "false -> cancelled done",
            "false -> cancelled done",
            "(mayResume: false, runsNow: true) -> cancelled done",
            "- -> cancelled done",
        ],
    ]

    @Test(arguments: fixtures.map(\.name))
    func everyEventInState(_ name: String) throws {
        let make = try #require(Self.fixtures.first { $0.name == name }?.make)
        let rows = try #require(Self.expected[name])
        #expect(rows.count == Self.events.count)
        for (index, event) in Self.events.enumerated() {
            var machine = make()
            let answer = event.apply(&machine)
            let seen = "\(answer) -> \(Self.describe(machine))"
            #expect(seen == rows[safe: index], "\(name), event \(event.name)")
        }
    }

    @Test func everyFixtureHasARowPerEvent() {
        #expect(Set(Self.expected.keys) == Set(Self.fixtures.map(\.name)))
    }

    // MARK: What attempts and hops carry

    @Test func redirectHopKeepsTheAttemptDeadlineAndCountsTheRedirect() {
        var machine = Self.exchanging()
        guard case let .send(firstHop, firstDeadline) = machine.hopWillStart(isRedirectHop: false, deadline: { Self.deadline }) else {
            Issue.record("the hop did not start")
            return
        }
        machine.hopDecided(firstHop, .follow(Self.request))
        let outcome = machine.hopCompleted(firstHop)
        #expect(outcome.map(Self.describe) == "follow")
        let later = Self.deadline.addingTimeInterval(60)
        guard case let .send(secondHop, secondDeadline) = machine.hopWillStart(isRedirectHop: true, deadline: { later }) else {
            Issue.record("the redirect hop did not start")
            return
        }
        #expect(secondHop != firstHop)
        #expect(secondDeadline == firstDeadline)
        #expect(machine.redirectCount == 1)
        #expect(machine.timeline.redirectCount == 1)
    }

    @Test func lateDecisionOfAnEarlierHopChangesNothing() {
        var machine = Self.exchanging()
        let firstHop = machine.hop?.id ?? -1
        _ = machine.hopCompleted(firstHop)
        _ = machine.hopWillStart(isRedirectHop: true) { nil }
        machine.hopDecided(firstHop, .refuse(.httpTooManyRedirects))
        let lateOutcome = machine.hopCompleted(firstHop)
        #expect(lateOutcome == nil)
        #expect(machine.hop.map { Self.describe($0.outcome) } == "deliver")
    }

    @Test func challengesAreAnsweredOncePerAttempt() {
        var machine = Self.exchanging()
        let answers = [machine.mayAnswerChallenge(), machine.mayAnswerChallenge(),
                       machine.mayAnswerProxyChallenge(), machine.mayAnswerProxyChallenge()]
        #expect(answers == [true, false, true, false])
        _ = machine.transferCompleted(error: .explicitlyCancelled, at: Self.date)
        _ = machine.scheduleRetry()
        _ = machine.beginRetry()
        #expect(machine.retryCount == 1)
        #expect(machine.error == nil)
        let answersAfterRetry = [machine.mayAnswerChallenge(), machine.mayAnswerProxyChallenge()]
        #expect(answersAfterRetry == [true, true])
    }

    @Test func responseAndTimesBelongToTheAttempt() throws {
        var machine = Self.preparing()
        machine.urlRequestCreated(at: Self.date)
        machine.urlRequestCreated(at: Self.date.addingTimeInterval(5))
        _ = machine.urlRequestReady(Self.request)
        _ = machine.hopWillStart(isRedirectHop: false) { nil }
        machine.requestSent(at: Self.date.addingTimeInterval(1))
        let url = try #require(Self.request.url)
        let response = LazyHTTPResponse(url: url, head: TransportResponseHead(statusCode: 200, headerFields: []))
        machine.responseReceived(response, at: Self.date.addingTimeInterval(2))
        _ = machine.transferCompleted(error: nil, at: Self.date.addingTimeInterval(3))
        #expect(machine.response === response)
        let timeline = machine.timeline
        #expect(timeline.requestStartTime == Self.date)
        #expect(timeline.requestSentTime == Self.date.addingTimeInterval(1))
        #expect(timeline.initialResponseTime == Self.date.addingTimeInterval(2))
        #expect(timeline.requestCompletedTime == Self.date.addingTimeInterval(3))
        _ = machine.scheduleRetry()
        _ = machine.beginRetry()
        #expect(machine.response == nil)
        #expect(machine.timeline.requestStartTime == Self.date)
        #expect(machine.timeline.requestSentTime == nil)
        #expect(machine.timeline.retryCount == 1)
    }

    @Test func firstErrorOfATransferWins() {
        var machine = Self.exchanging()
        machine.error = .explicitlyCancelled
        let error = machine.transferCompleted(error: .sessionTaskFailed(error: URLError(.timedOut)), at: Self.date)
        #expect(error?.isExplicitlyCancelledError == true)
        _ = machine.beginFinishing(error: .sessionDeinitialized)
        #expect(machine.error?.isSessionDeinitializedError == true)
    }

    @Test func stateTransitionsFollowAlamofiresTable() {
        typealias S = Request.State
        let all: [S] = [.initialized, .resumed, .suspended, .cancelled, .finished]
        for target in all { #expect(S.initialized.canTransition(to: target)) }
        #expect(S.resumed.canTransition(to: .suspended))
        #expect(S.suspended.canTransition(to: .resumed))
        #expect(S.resumed.canTransition(to: .cancelled))
        #expect(S.suspended.canTransition(to: .cancelled))
        #expect(!S.resumed.canTransition(to: .resumed))
        #expect(!S.suspended.canTransition(to: .suspended))
        for target in all {
            #expect(!S.cancelled.canTransition(to: target))
            #expect(!S.finished.canTransition(to: target))
        }
        #expect(!S.resumed.canTransition(to: .initialized))
    }

    // MARK: Fixtures

    static let request = URLRequest(url: URL(string: "https://example.com/get")!)
    static let date = Date(timeIntervalSinceReferenceDate: 1000)
    static let deadline = Date(timeIntervalSinceReferenceDate: 2000)

    static func preparing() -> RequestStateMachine {
        var machine = RequestStateMachine()
        _ = machine.resume(setupIsLazy: true)
        _ = machine.beginSetup()
        return machine
    }

    static func exchanging() -> RequestStateMachine {
        var machine = preparing()
        _ = machine.urlRequestReady(request)
        _ = machine.hopWillStart(isRedirectHop: false) { deadline }
        _ = machine.hopDidStart(machine.hop?.id ?? -1, task: StubTask())
        return machine
    }

    static func deciding() -> RequestStateMachine {
        var machine = exchanging()
        _ = machine.hopCompleted(machine.hop?.id ?? -1)
        _ = machine.transferCompleted(error: nil, at: date)
        return machine
    }

    static func describe(_ machine: RequestStateMachine) -> String {
        let attempt = machine.ledger.withCurrent { "#\($0.number)" } ?? ""
        let phase: String
        switch machine.phase {
        case .idle: phase = "idle"
        case .preparing: phase = "preparing" + attempt
        case .waitingForResume: phase = "waitingForResume" + attempt
        case let .exchanging(hop): phase = "exchanging" + attempt + "(hop \(hop.id)\(hop.task == nil ? "" : ", task"))"
        case .deciding: phase = "deciding" + attempt
        case .waitingToRetry: phase = "waitingToRetry" + attempt
        case .finishing: phase = "finishing" + attempt
        case .done: phase = "done" + attempt
        }
        return "\(machine.state) \(phase)"
    }

    static func describe(_ action: RequestStateMachine.ResumeAction) -> String {
        switch action {
        case .ignore: "ignore"
        case .resumed(then: .nothing): "resumed(then: nothing)"
        case .resumed(then: .startSetup): "resumed(then: startSetup)"
        case let .resumed(then: .startExchange(urlRequest)): "resumed(then: startExchange(\(urlRequest.url?.absoluteString ?? "")))"
        case .resumed(then: .resumeExchange): "resumed(then: resumeExchange)"
        }
    }

    static func describe(_ error: AFError) -> String {
        error.isExplicitlyCancelledError ? "explicitlyCancelled" : "\(error)"
    }

    static func describe(_ action: RequestStateMachine.CancelAction) -> String {
        switch action {
        case .ignore: "ignore"
        case let .cancelExchange(task): "cancelExchange(\(task == nil ? "no task" : "task"))"
        case .finish: "finish"
        case .notifyOnly: "notifyOnly"
        }
    }

    static func describe(_ start: RequestStateMachine.HopStart) -> String {
        switch start {
        case let .send(hopID, deadline): "send(hop \(hopID), \(deadline == nil ? "no deadline" : "deadline"))"
        case .cancelled: "cancelled"
        }
    }

    static func describe(_ outcome: RequestStateMachine.HopOutcome) -> String {
        switch outcome {
        case .deliver: "deliver"
        case .deliverRevalidated: "deliverRevalidated"
        case .follow: "follow"
        case .refuse: "refuse"
        case .answerChallenge: "answerChallenge"
        }
    }
}

/// A transport task that does nothing: the machine only keeps it.
private final class StubTask: TransportTask {
    func cancel() {}
    func pauseReading() {}
    func resumeReading() {}
}

private extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}

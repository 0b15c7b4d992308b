import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The pure state machine behind a `Request`: the user's resume, suspend and cancel, and every
/// milestone of the current attempt (setup, each hop of its exchange, the decision to retry, the
/// response handlers) go in as events; what the request must do comes out as actions. It
/// performs no I/O and calls nothing, so every rule is tested on its own
/// (`RequestStateMachineTests`).
///
/// `state` is the public `Request.State`. `phase` is what the pipeline does, with the hop on the
/// transport and what its response head decided (a redirect to follow, a challenge to answer, a
/// stored response a 304 revalidated). `ledger` holds every attempt's facts (deadline, times,
/// response, redirects, requests sent, task): the current attempt is its last record.
/// `responseHandlers` queues the response handlers and holds the end of the exchange handed to an
/// awaiting task; its events are in `RequestStateMachine+ResponseHandlers.swift`.
struct RequestStateMachine {
    /// One hop of the attempt's exchange on the transport.
    struct Hop {
        /// Tells hops apart: a late answer of an earlier hop's redirect handler changes nothing.
        let id: Int
        /// The exchange's handle, once known (`execute` returned, or its first event came).
        var task: (any TransportTask)?
        /// When the response head arrived.
        var responseTime: Date?
        /// What the response head decided for the end of the hop.
        var outcome: HopOutcome = .deliver
    }

    /// What happens when a hop's exchange completes without an error.
    enum HopOutcome {
        /// The response was the final one: the transfer completes.
        case deliver
        /// A 304 revalidated this stored response: its body is delivered, then the transfer completes.
        case deliverRevalidated(StoredResponse)
        /// A redirect is followed with this request, as the next hop.
        case follow(URLRequest)
        /// A redirect is refused: the transfer fails with this code.
        case refuse(URLError.Code)
        /// A 401 challenge is answered with this request, as the next hop.
        case answerChallenge(URLRequest)
    }

    /// What the pipeline does for the current attempt (the ledger's last record; finishing and
    /// done may have none, when the request ended before any attempt began).
    enum Phase {
        /// Nothing started yet (lazy setup waits for the first resume).
        case idle
        /// The URLRequest is being built and adapted (and an upload's body made).
        case preparing
        /// The URLRequest is ready; the exchange waits for `resume()`.
        case waitingForResume(URLRequest)
        /// A hop is on the transport (or about to be: `hop.task` is nil until it is).
        case exchanging(Hop)
        /// The exchange ended; validators and retriers decide.
        case deciding
        /// A retry is scheduled.
        case waitingToRetry
        /// The response serializers run.
        case finishing
        /// Serializers completed; handlers added later run alone, on the stored outcome.
        case done
    }

    private(set) var state: Request.State = .initialized
    private(set) var phase: Phase = .idle
    /// Every attempt, oldest first; the last is the current one.
    private(set) var ledger = AttemptLedger()
    /// Retries performed so far.
    private(set) var retryCount = 0
    /// The request's error so far (creation, adaptation, transport, validation, cancellation).
    var error: AFError?
    /// When the first URLRequest was built.
    private(set) var startTime: Date?
    private var hopCount = 0
    /// The response handlers, their completions, the finish handlers, and the end of the exchange
    /// handed to an awaiting task. Changed only by the events of this type.
    var responseHandlers = ResponseHandlerQueue()

    // MARK: Reading

    /// Whether an attempt has begun (its setup started).
    var hasAttempt: Bool { !ledger.isEmpty }

    /// The final response of the current attempt's hop, read in place.
    var response: LazyHTTPResponse? { ledger.withCurrent { $0.response } ?? nil }

    /// Redirects the current attempt followed so far.
    var redirectCount: Int { ledger.withCurrent { $0.redirectCount } ?? 0 }

    /// Whether the current attempt's hop in force went to the network.
    var hopUsesNetwork: Bool { ledger.withCurrent { $0.hopUsesNetwork } ?? true }

    /// The hop on the transport, if any.
    var hop: Hop? {
        if case let .exchanging(hop) = phase { return hop }
        return nil
    }

    /// The exchange in flight, if any.
    var transportTask: (any TransportTask)? { hop?.task }

    /// Whether an exchange runs (its body can be paused and resumed).
    var isExchanging: Bool { hop != nil }

    /// Whether the serializers have completed.
    var isDone: Bool {
        if case .done = phase { return true }
        return false
    }

    /// Finishing or done: no exchange of the request ends any more.
    var hasBegunFinishing: Bool {
        switch phase {
        case .finishing, .done: true
        case .idle, .preparing, .waitingForResume, .exchanging, .deciding, .waitingToRetry: false
        }
    }

    var timeline: Timeline {
        ledger.withCurrent { attempt in
            Timeline(requestStartTime: startTime, requestSentTime: attempt.sentTime, initialResponseTime: attempt.firstByteTime,
                     requestCompletedTime: attempt.completedTime, redirectCount: attempt.redirectCount, retryCount: retryCount)
        } ?? Timeline(requestStartTime: startTime, requestSentTime: nil, initialResponseTime: nil, requestCompletedTime: nil,
                      redirectCount: 0, retryCount: retryCount)
    }

    // MARK: User-driven events

    enum ResumeAction: Equatable {
        /// Not allowed in this state (already resumed, cancelled or finished).
        case ignore
        /// Resumed: report it, then do this.
        case resumed(then: AfterResume)
    }

    enum AfterResume: Equatable {
        case nothing
        /// Lazy setup: the first resume starts it.
        case startSetup
        /// The URLRequest waited for the resume: its exchange starts.
        case startExchange(URLRequest)
        /// A suspended exchange reads again.
        case resumeExchange
    }

    /// `resume()`: allowed from `.initialized` and `.suspended`.
    mutating func resume(setupIsLazy: Bool) -> ResumeAction {
        guard state.canTransition(to: .resumed) else { return .ignore }
        state = .resumed
        switch phase {
        case .idle where setupIsLazy:
            return .resumed(then: .startSetup)
        case let .waitingForResume(urlRequest):
            phase = .exchanging(nextHop())
            return .resumed(then: .startExchange(urlRequest))
        case .exchanging:
            return .resumed(then: .resumeExchange)
        case .idle, .preparing, .deciding, .waitingToRetry, .finishing, .done:
            return .resumed(then: .nothing)
        }
    }

    enum SuspendAction: Equatable {
        case ignore
        /// Suspended; with `exchangeIsRunning`, the running exchange stops reading.
        case suspended(exchangeIsRunning: Bool)
    }

    /// `suspend()`: allowed from `.initialized` and `.resumed`.
    mutating func suspend() -> SuspendAction {
        guard state.canTransition(to: .suspended) else { return .ignore }
        state = .suspended
        return .suspended(exchangeIsRunning: isExchanging)
    }

    enum CancelAction {
        case ignore
        /// Cancel the exchange (`task` is nil when it is about to start: it then starts cancelled).
        case cancelExchange(task: (any TransportTask)?)
        /// Nothing runs on the transport: finish now.
        case finish
        /// The request is already finishing: report the cancellation only.
        case notifyOnly
    }

    /// `cancel()`: allowed from every state but `.cancelled` and `.finished`. The request's error
    /// becomes `.explicitlyCancelled` unless one is already recorded.
    mutating func cancel() -> CancelAction {
        guard state.canTransition(to: .cancelled) else { return .ignore }
        state = .cancelled
        if error == nil { error = .explicitlyCancelled }
        switch phase {
        case let .exchanging(hop): return .cancelExchange(task: hop.task)
        case .idle, .preparing, .waitingForResume, .deciding, .waitingToRetry: return .finish
        case .finishing, .done: return .notifyOnly
        }
    }

    // MARK: Setup

    /// The setup of the first attempt begins; false if the request is cancelled or already busy.
    mutating func beginSetup() -> Bool {
        guard case .idle = phase, state != .cancelled, state != .finished else { return false }
        ledger.beginAttempt()
        phase = .preparing
        return true
    }

    /// A retry was decided, after the exchange or after a serializer failed; false when the
    /// request was cancelled meanwhile (it then finishes).
    mutating func scheduleRetry() -> Bool {
        guard state != .cancelled, state != .finished else { return false }
        switch phase {
        case .deciding:
            phase = .waitingToRetry
        case .finishing:
            // A request that finished before any attempt began gets an empty record to retry from.
            if ledger.isEmpty { ledger.beginAttempt() }
            phase = .waitingToRetry
        case .idle, .preparing, .waitingForResume, .exchanging, .waitingToRetry, .done:
            return false
        }
        return true
    }

    /// The scheduled retry begins its setup: a new attempt, without the last one's error and
    /// response; the response handlers will run again from the first. False when the request was
    /// cancelled while the retry waited.
    mutating func beginRetry() -> Bool {
        guard case .waitingToRetry = phase, state != .cancelled, state != .finished else { return false }
        retryCount += 1
        error = nil
        ledger.beginAttempt()
        phase = .preparing
        responseHandlers.retryBegins()
        return true
    }

    /// The first URLRequest of the request was built (the start of its timeline).
    mutating func urlRequestCreated(at time: Date) {
        if startTime == nil { startTime = time }
    }

    enum TransferStart {
        /// The request is resumed: send.
        case start
        /// The request is initialized or suspended: nothing goes out until `resume()`.
        case waitForResume
        /// The request was cancelled (or finished) during setup.
        case abandon
    }

    /// The URLRequest of the attempt is final.
    mutating func urlRequestReady(_ urlRequest: URLRequest) -> TransferStart {
        guard case .preparing = phase, state != .cancelled, state != .finished else { return .abandon }
        guard state == .resumed else {
            phase = .waitingForResume(urlRequest)
            return .waitForResume
        }
        phase = .exchanging(nextHop())
        return .start
    }

    // MARK: Hops

    enum HopStart {
        /// Send the hop with the attempt's deadline.
        case send(hopID: Int, deadline: Date?)
        /// The request was cancelled just before: the transfer completes as cancelled.
        case cancelled
    }

    /// A hop is about to go on the transport. The first hop of an attempt sets its deadline with
    /// `deadline`; a redirect hop keeps it. The response of the previous hop is forgotten.
    mutating func hopWillStart(isRedirectHop: Bool, deadline makeDeadline: () -> Date?) -> HopStart {
        guard case .exchanging(var hop) = phase, state != .cancelled else { return .cancelled }
        let deadline = ledger.updateCurrent { attempt -> Date? in
            if !isRedirectHop || attempt.deadline == nil { attempt.deadline = makeDeadline() }
            attempt.response = nil
            return attempt.deadline
        } ?? nil
        if isRedirectHop || hop.task != nil {
            hop = nextHop()
            phase = .exchanging(hop)
        }
        return .send(hopID: hop.id, deadline: deadline)
    }

    /// The current hop sends `outgoing`: the attempt's request as sent from now on.
    mutating func hopWillSend(_ outgoing: OutgoingRequest) {
        ledger.hopWillSend(outgoing)
    }

    /// The transport took the hop (`usesNetwork` unless a URLProtocol class or the cache answers
    /// it); true when the request was cancelled meanwhile (cancel `task`).
    mutating func hopDidStart(_ hopID: Int, task: any TransportTask, usesNetwork: Bool = true) -> Bool {
        guard case .exchanging(var hop) = phase, hop.id == hopID else { return false }
        if hop.task == nil {
            hop.task = task
            phase = .exchanging(hop)
        }
        ledger.updateCurrent { $0.hopUsesNetwork = usesNetwork }
        return state == .cancelled
    }

    /// The request went out.
    mutating func requestSent(at time: Date) {
        ledger.updateCurrent { $0.sentTime = time }
    }

    /// The hop's response head arrived (before anything is decided about it).
    mutating func hopResponseArrived(_ hopID: Int, task: any TransportTask, at time: Date) {
        updateHop(hopID) { hop in
            // A transport may report events before `execute` returns.
            if hop.task == nil { hop.task = task }
            hop.responseTime = time
        }
    }

    /// What the hop's response head decided for the end of the hop.
    mutating func hopDecided(_ hopID: Int, _ outcome: HopOutcome) {
        updateHop(hopID) { hop in hop.outcome = outcome }
    }

    /// A 401 of this attempt may be answered: true the first time only.
    mutating func mayAnswerChallenge() -> Bool {
        ledger.updateCurrent { attempt in
            defer { attempt.answeredChallenge = true }
            return !attempt.answeredChallenge
        } ?? false
    }

    /// A 407 of this attempt may be answered: true the first time only.
    mutating func mayAnswerProxyChallenge() -> Bool {
        ledger.updateCurrent { attempt in
            defer { attempt.answeredProxyChallenge = true }
            return !attempt.answeredProxyChallenge
        } ?? false
    }

    /// The final response of the hop arrived.
    mutating func responseReceived(_ response: LazyHTTPResponse, at time: Date) {
        ledger.updateCurrent { attempt in
            attempt.response = response
            attempt.firstByteTime = time
        }
    }

    /// The hop's exchange completed without an error: what its response head decided. A
    /// followed redirect counts one more redirect.
    mutating func hopCompleted(_ hopID: Int) -> HopOutcome? {
        guard case .exchanging(var hop) = phase, hop.id == hopID else { return nil }
        let outcome = hop.outcome
        if case .follow = outcome { ledger.updateCurrent { $0.redirectCount += 1 } }
        hop.task = nil
        phase = .exchanging(hop)
        return outcome
    }

    /// The attempt's exchange ended (all hops), or its setup failed. The first error recorded
    /// wins: a cancellation or a refused response stays the request's error.
    mutating func transferCompleted(error transferError: AFError?, at time: Date) -> AFError? {
        if error == nil { error = transferError }
        switch phase {
        case .exchanging, .preparing, .waitingForResume:
            ledger.updateCurrent { $0.completedTime = time }
            phase = .deciding
        case .idle, .deciding, .waitingToRetry, .finishing, .done:
            break
        }
        return error
    }

    // MARK: Finishing

    /// The request starts finishing (its serializers run); false if it already is. A task's offer
    /// to run the end of an exchange goes: none ends any more.
    mutating func beginFinishing(error finishError: AFError?) -> Bool {
        if let finishError { error = finishError }
        switch phase {
        case .finishing, .done: return false
        case .idle, .preparing, .waitingForResume, .exchanging, .deciding, .waitingToRetry: phase = .finishing
        }
        responseHandlers.finishingBegins()
        return true
    }

    /// A response handler was added: a finished request goes back to `.resumed` to run it.
    /// Returns whether the request may be resumed automatically, and whether the handler runs
    /// now (the serializers completed before: it runs alone, on the stored outcome).
    mutating func serializerAdded() -> (mayResume: Bool, runsNow: Bool) {
        if state == .finished { state = .resumed }
        return (state.canTransition(to: .resumed), isDone)
    }

    /// Every queued serializer completed.
    mutating func serializersCompleted() {
        phase = .done
        // A cancelled request stays `.cancelled`, as in Alamofire.
        if state.canTransition(to: .finished) { state = .finished }
    }

    // MARK: Tasks

    /// The current attempt's URLRequest is final: its task begins, unless the request was
    /// cancelled or finished (the attempt then has none). Returns the attempt's number.
    mutating func taskBegins(identifier: Int, originalRequest: URLRequest) -> Int? {
        guard state != .cancelled, state != .finished else { return nil }
        return ledger.beginTask(identifier: identifier, originalRequest: originalRequest)
    }

    /// The request was cancelled: the running task, if any, is canceling. Returns its attempt's number.
    mutating func taskFollowsCancel() -> Int? {
        ledger.updateLiveTask { $0.isCancelled = true }
    }

    /// The running task's exchange ended: its own values are frozen. Returns its attempt's number.
    mutating func taskEnds(_ outcome: AttemptTaskOutcome) -> Int? {
        ledger.endLiveTask(outcome)
    }

    /// A redirect hop of the running task answered `response`, shown to a redirect handler.
    /// Returns the task's attempt number.
    mutating func taskShows(hopResponse response: HTTPURLResponse) -> Int? {
        ledger.updateLiveTask { $0.hopResponse = response }
    }

    /// The facade of attempt `number`'s task: the one made before, or the one `make` makes now.
    mutating func taskFacade(_ number: Int, making make: (AttemptTask) -> URLSessionTask) -> URLSessionTask? {
        ledger.updateRecord(number) { $0.task?.facade(making: make) } ?? nil
    }

    // MARK: Helpers

    private mutating func nextHop() -> Hop {
        hopCount += 1
        return Hop(id: hopCount)
    }

    private mutating func updateHop(_ hopID: Int, _ change: (inout Hop) -> Void) {
        guard case .exchanging(var hop) = phase, hop.id == hopID else { return }
        change(&hop)
        phase = .exchanging(hop)
    }
}

extension Request.State {
    /// The transitions Alamofire allows: from `.initialized` anything; `.resumed` and `.suspended`
    /// swap and may be cancelled; `.cancelled` may only finish; `.finished` is terminal for the
    /// user-driven states.
    func canTransition(to newState: Request.State) -> Bool {
        switch (self, newState) {
        case (.initialized, _): true
        case (_, .initialized), (.cancelled, _), (.finished, _): false
        case (.resumed, .cancelled), (.suspended, .cancelled), (.resumed, .suspended), (.suspended, .resumed): true
        case (.suspended, .suspended), (.resumed, .resumed): false
        case (_, .finished): true
        }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The steps of the pipeline as they happen to a Request. Session drives setup and retries; the
// request drives its own exchanges, validation and finishing. Subclasses differ only in the hooks
// at the end of this file: where the body comes from and where the response goes.
extension Request {
    // MARK: Setup

    func didCreateInitialURLRequest(_ urlRequest: URLRequest) {
        let now = Date()
        mutableState.withLock { state in
            state.requests.append(urlRequest)
            state.machine.urlRequestCreated(at: now)
        }
        notify(.didCreateInitialURLRequest, about: (self, urlRequest)) { $0.request($1.0, didCreateInitialURLRequest: $1.1) }
    }

    func didFailToCreateURLRequest(with error: AFError) {
        self.error = error
        notify(.didFailToCreateURLRequest) { $0.request(self, didFailToCreateURLRequestWithError: error) }
        callCURLHandler()
        failSetup(with: error)
    }

    func didAdaptInitialRequest(_ initialRequest: URLRequest, to adaptedRequest: URLRequest) {
        mutableState.withLock { $0.requests.append(adaptedRequest) }
        notify(.didAdaptInitialRequest) { $0.request(self, didAdaptInitialRequest: initialRequest, to: adaptedRequest) }
    }

    func didFailToAdaptURLRequest(_ initialRequest: URLRequest, withError error: AFError) {
        self.error = error
        notify(.didFailToAdaptURLRequest) { $0.request(self, didFailToAdaptURLRequest: initialRequest, withError: error) }
        callCURLHandler()
        failSetup(with: error)
    }

    /// The attempt's body could not be made (the error is already recorded and reported).
    func didFailToCreateBody(with error: AFError) {
        failSetup(with: error)
    }

    private func failSetup(with error: AFError) {
        let now = Date()
        let error = mutableState.withLock { $0.machine.transferCompleted(error: error, at: now) }
        retryOrFinish(error: error)
    }

    /// The URLRequest of this attempt is final: handlers see it, then the exchange starts (or waits
    /// for `resume()`).
    func didCreateURLRequest(_ urlRequest: URLRequest) {
        let (handler, transfer) = mutableState.withLock { state in
            (state.urlRequestHandler, state.machine.urlRequestReady(urlRequest))
        }
        notify(.didCreateURLRequest, about: (self, urlRequest)) { $0.request($1.0, didCreateURLRequest: $1.1) }
        if let handler { handler.queue.async { handler.handler(urlRequest) } }
        callCURLHandler()
        switch transfer {
        case .start:
            attemptTaskDidBegin(with: urlRequest)
            startExchange(urlRequest)
        case .waitForResume:
            attemptTaskDidBegin(with: urlRequest)
        case .abandon:
            break
        }
    }

    /// Calls the pending cURL handler once, as Alamofire does: a later attempt does not call it again.
    private func callCURLHandler() {
        let pending = mutableState.withLock { state in
            defer { state.cURLHandler = nil }
            return state.cURLHandler
        }
        guard let handler = pending else { return }
        let description = cURLDescription()
        handler.queue.async { handler.handler(description) }
    }

    // MARK: Exchange

    /// Sends `urlRequest` on the Session's transport, as one hop of the current attempt.
    ///
    /// `performedRequests` holds one entry per attempt, like the `currentRequest` of a URLSession
    /// task: a redirect hop replaces the attempt's entry with the request it sends (both read the
    /// attempt's record in the ledger).
    func startExchange(_ urlRequest: URLRequest, isRedirectHop: Bool = false) {
        guard let environment else {
            finish(error: .sessionDeinitialized)
            return
        }
        // The Session adds its header fields and asks its cache, on the disk's threads when only
        // the disk can tell; the hop goes on in `sendHop`.
        environment.planHop(sending: urlRequest, for: self, isRedirectHop: isRedirectHop)
    }

    /// Sends the hop `plan` describes, as one hop of the current attempt, or answers it from the
    /// cache. Called by the environment's `planHop`, on the root queue.
    func sendHop(_ plan: HopPlan, isRedirectHop: Bool) {
        guard let environment else {
            finish(error: .sessionDeinitialized)
            return
        }
        let outgoing = plan.outgoing, cacheAction = plan.cacheAction
        let replayed = cacheAction?.replayed
        // The attempt's deadline is taken as its first hop starts, not when it was planned (the
        // plan may have waited for the cache's disk).
        let (start, credential) = mutableState.withLock { state in
            (state.machine.hopWillStart(isRedirectHop: isRedirectHop,
                                        deadline: { plan.attemptDuration.map { Date(timeIntervalSinceNow: $0) } }),
             state.credential)
        }
        guard case let .send(hopID, deadline) = start else {
            // Cancelled just before sending: the request's error is already `.explicitlyCancelled`;
            // its task ends as URLSession ends a cancelled task.
            didCompleteTransfer(error: .sessionTaskFailed(error: URLError(.cancelled, userInfo: [
                NSURLErrorFailingURLErrorKey: outgoing.url as Any,
                NSLocalizedDescriptionKey: TransportErrorMapping.description(of: .cancelled),
            ])))
            return
        }
        // The environment asks its URLProtocol classes (`canInit`) as it prepares the hop, so a hop
        // cancelled before it starts, or failing the checks below, asks none; the outcome is the
        // same as when they were asked first.
        var prepared: PreparedHop
        do {
            try outgoing.validateHeaderFields()
            if case .fail? = cacheAction { throw Self.cacheMissError(for: outgoing.url) }
            prepared = try environment.prepareHop(plan, for: self, start: StartedHop(deadline: deadline, credential: credential))
        } catch {
            let afError = error.asAFError ?? .sessionTaskFailed(error: URLError(.badURL))
            didCompleteTransfer(error: afError)
            return
        }
        mutableState.withLock { $0.machine.hopWillSend(outgoing) }
        // A redirect hop continues the attempt's exchange, as it continues a URLSession task.
        if !isRedirectHop { notify(.didResumeExchange, about: self as Request) { $0.requestDidResumeExchange($1) } }
        if let answer = proxyAuthorizationAnswer(for: prepared.transportRequest?.proxy) {
            prepared.transportRequest?.proxy?.authorization = answer
        }
        let exchange = RequestExchange(request: self, hopID: hopID, outgoing: outgoing, proxy: prepared.transportRequest?.proxy,
                                       cacheAction: cacheAction)
        // A fresh stored response answers without the network, through the same exchange events.
        let replay = replayed.map { CacheReplayTask(stored: $0, events: exchange, queue: underlyingQueue) }
        let task: any TransportTask
        if let replay {
            task = replay
        } else if let transportRequest = prepared.transportRequest {
            task = openExchange(transportRequest, of: prepared, on: environment, events: exchange)
        } else {
            // Not reached: without a replay, the environment prepared a transport request.
            didCompleteTransfer(error: .sessionTaskFailed(error: URLError(.badURL)))
            return
        }
        let usesNetwork = replay == nil && prepared.urlProtocolClass == nil
        let cancelled = mutableState.withLock { $0.machine.hopDidStart(hopID, task: task, usesNetwork: usesNetwork) }
        // Paused at once when a reason is in force (a hop that starts while suspended). Not when
        // the exchange already ended, from inside `execute` or on the transport's thread.
        readDemand.attach(task, hop: hopID)
        if cancelled { task.cancel() }
        replay?.start()
    }

    /// What a response head from the network asks of the Session's storage (see
    /// `RequestEnvironment.recordHead`): nil when nothing, else the work to run on the root queue
    /// before the end of the hop, so that the next hop and the handlers see its effect.
    func storageWork(forHeadFromNetwork head: TransportResponseHead, sentAs urlRequest: URLRequest) -> (@Sendable () -> Void)? {
        environment?.recordHead(head, sentAs: urlRequest)
    }

    func exchangeDidSendRequest(_ outgoing: OutgoingRequest) {
        let now = Date()
        mutableState.withLock { $0.machine.requestSent(at: now) }
        notify(.didSendURLRequest, about: (self, outgoing)) { $0.request($1.0, didSendURLRequest: $1.1.urlRequest) }
    }

    /// A final (non-redirect) response head arrived.
    func exchangeDidReceive(_ response: LazyHTTPResponse, task: any TransportTask) {
        let now = Date()
        mutableState.withLock { $0.machine.responseReceived(response, at: now) }
        notify(.didReceiveResponse, about: (self, response)) { monitor, about in
            if let made = about.1.response { monitor.request(about.0, didReceiveResponse: made) }
        }
        didReceiveResponseHead(response, task: task)
    }

    func exchangeDidReceive(bodyPart: Data, task: any TransportTask) {
        didReceiveBodyPart(bodyPart, task: task)
    }

    /// The hop ended: the next hop starts (a followed redirect, an answered challenge), or the
    /// transfer completes.
    /// `cacheOffer` offers a complete response from the network to the cache.
    func exchangeDidComplete(hop hopID: Int, url: URL?, task: any TransportTask,
                             cacheOffer: CacheOffer? = nil) {
        guard let outcome = mutableState.withLock({ $0.machine.hopCompleted(hopID) }) else { return }
        switch outcome {
        case let .follow(nextRequest), let .answerChallenge(nextRequest):
            // The next hop reads the Session's storage, URLProtocol classes and trust manager:
            // on the Session's queue, not the transport's thread.
            onRootQueue { self.startExchange(nextRequest, isRedirectHop: true) }
        case let .refuse(code):
            let error = URLError(code, userInfo: [
                NSURLErrorFailingURLErrorKey: url as Any,
                NSLocalizedDescriptionKey: TransportErrorMapping.description(of: code),
            ])
            didCompleteTransfer(error: .sessionTaskFailed(error: error))
        case let .deliverRevalidated(stored):
            if !stored.data.isEmpty { exchangeDidReceive(bodyPart: stored.data, task: task) }
            didCompleteTransfer(error: nil)
        case .deliver:
            didCompleteTransfer(error: nil, cacheOffer: cacheOffer)
        }
    }

    /// The response head of hop `hopID` arrived from `task`.
    func hopResponseArrived(_ hopID: Int, task: any TransportTask, at time: Date) {
        mutableState.withLock { $0.machine.hopResponseArrived(hopID, task: task, at: time) }
    }

    /// What the response head of hop `hopID` decided for the end of the hop.
    func hopDecided(_ hopID: Int, _ outcome: RequestStateMachine.HopOutcome) {
        mutableState.withLock { $0.machine.hopDecided(hopID, outcome) }
    }

    /// Whether hop `hopID`'s body goes to the request's sink: not for a redirect followed or
    /// refused, a challenge answered, or a 304 replaced by the stored response.
    func hopDeliversBody(_ hopID: Int) -> Bool {
        mutableState.withLock { state in
            guard let hop = state.machine.hop, hop.id == hopID, case .deliver = hop.outcome else { return false }
            return true
        }
    }

    /// When hop `hopID`'s response head arrived.
    func hopResponseTime(_ hopID: Int) -> Date? {
        mutableState.withLock { state in
            guard let hop = state.machine.hop, hop.id == hopID else { return nil }
            return hop.responseTime
        }
    }

    /// Hop `hopID` failed in a way the request answers (a proxy's 407): `urlRequest` goes out
    /// again as the next hop of the attempt.
    func exchangeDidRetryHop(_ hopID: Int, with urlRequest: URLRequest) {
        guard mutableState.withLock({ $0.machine.hopCompleted(hopID) }) != nil else { return }
        startExchange(urlRequest, isRedirectHop: true)
    }

    var redirectsSoFar: Int { mutableState.withLock { $0.machine.redirectCount } }

    /// The request's redirect handler, else the Session's, else none (follow).
    var effectiveRedirectHandler: (any RedirectHandler)? {
        redirectHandler ?? defaults.redirectHandler
    }
}


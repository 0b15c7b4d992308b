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
        guard let session else {
            finish(error: .sessionDeinitialized)
            return
        }
        // The Session's header fields are added to what is sent; the URLRequest with them merged
        // in is made only if something reads it.
        let outgoing = session.outgoingRequest(for: urlRequest)
        guard usesHTTPCache else {
            sendHop(outgoing, cacheAction: nil, isRedirectHop: isRedirectHop, on: session)
            return
        }
        // A task (the async API's caller, which starts its request itself) reads no file: when
        // only the cache's disk can answer, it is read on the disk's threads, and the hop goes
        // on from the root queue.
        let mayReadTheDisk = !ThreadContract.isInTask && !ThreadContract.isOnEventLoop
        if let cacheAction = session.cacheAction(for: outgoing, allowingDiskIO: mayReadTheDisk) {
            sendHop(outgoing, cacheAction: cacheAction, isRedirectHop: isRedirectHop, on: session)
            return
        }
        DiskIO.run {
            let cacheAction = session.cacheAction(for: outgoing, allowingDiskIO: true) ?? .load
            self.onRootQueue { self.sendHop(outgoing, cacheAction: cacheAction, isRedirectHop: isRedirectHop, on: session) }
        }
    }

    /// Sends `outgoing` as one hop of the current attempt, or answers it from the cache.
    private func sendHop(_ outgoing: OutgoingRequest, cacheAction: HTTPCacheAction?, isRedirectHop: Bool,
                         on session: any RequestSession) {
        let replayed = cacheAction?.replayed
        // A URLProtocol class of the Session may answer in place of the network (any scheme it
        // accepts, and no TLS: no trust evaluation).
        let urlProtocolClass = session.urlProtocolClass(for: outgoing, request: self)
        let (start, credential) = mutableState.withLock { state in
            (state.machine.hopWillStart(isRedirectHop: isRedirectHop, deadline: session.attemptDeadline), state.credential)
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
        // A stored response that answers without the network needs no transport request.
        var transportRequest: TransportRequest?
        do {
            try URLRequest.lupineValidateHeaderFields(outgoing.headerFields)
            if case .fail? = cacheAction { throw Self.cacheMissError(for: outgoing.url) }
            if replayed == nil {
                transportRequest = try session.transportRequest(for: outgoing.base, headerFields: outgoing.headerFields,
                                                                body: transportBody(for: outgoing.base), deadline: deadline,
                                                                schemes: urlProtocolClass == nil ? supportedURLSchemes : [],
                                                                conditionalHeaders: cacheAction?.conditionalHeaders ?? [],
                                                                credential: credential,
                                                                evaluatesTrust: urlProtocolClass == nil)
            }
        } catch {
            let afError = error.asAFError ?? .sessionTaskFailed(error: URLError(.badURL))
            didCompleteTransfer(error: afError)
            return
        }
        mutableState.withLock { $0.machine.hopWillSend(outgoing) }
        // A redirect hop continues the attempt's exchange, as it continues a URLSession task.
        if !isRedirectHop { notify(.didResumeExchange, about: self as Request) { $0.requestDidResumeExchange($1) } }
        if let answer = proxyAuthorizationAnswer(for: transportRequest?.proxy) { transportRequest?.proxy?.authorization = answer }
        let exchange = RequestExchange(request: self, hopID: hopID, outgoing: outgoing, proxy: transportRequest?.proxy,
                                       cacheAction: cacheAction)
        // A fresh stored response answers without the network, through the same exchange events.
        let replay = replayed.map { CacheReplayTask(stored: $0, events: exchange, queue: underlyingQueue) }
        let task: any TransportTask
        if let replay {
            task = replay
        } else if let transportRequest {
            task = urlProtocolClass.map { protocolClass in
                session.urlProtocolTransport(protocolClass, for: outgoing.urlRequest, request: self, cacheAction: cacheAction)
                    .execute(transportRequest, events: exchange)
            } ?? openExchange(transportRequest, on: session, events: exchange)
        } else {
            // Not reached: without a replay, the transport request was made above.
            didCompleteTransfer(error: .sessionTaskFailed(error: URLError(.badURL)))
            return
        }
        let usesNetwork = replay == nil && urlProtocolClass == nil
        let cancelled = mutableState.withLock { $0.machine.hopDidStart(hopID, task: task, usesNetwork: usesNetwork) }
        // Paused at once when a reason is in force (a hop that starts while suspended). Not when
        // the exchange already ended, from inside `execute` or on the transport's thread.
        readDemand.attach(task, hop: hopID)
        if cancelled { task.cancel() }
        replay?.start()
    }

    /// What a response head from the network asks of the Session's storage, redirect hops and
    /// challenges included: its cookies stored, and, for a success answering an unsafe method, what
    /// the cache holds for the URL invalidated. Nil when it asks nothing, as most heads do: that
    /// is decided from the head alone, on the transport's thread. The work runs on the root queue
    /// (the storage is the user's and may touch the disk), queued before the end of the hop, so
    /// that the next hop and the handlers see its effect.
    func storageWork(forHeadFromNetwork head: TransportResponseHead, sentAs urlRequest: URLRequest) -> (@Sendable () -> Void)? {
        guard let session else { return nil }
        let setsCookies = head.headerFields.contains { $0.name.lupineEqualsIgnoringASCIICase("Set-Cookie") }
        // Only an unsafe method's success invalidates (RFC 9111, section 4.4). At once when that
        // touches no file, as for a URL never stored.
        let invalidates: Bool
        if let httpCache = defaults.httpCache,
           HTTPCacheRules.invalidatesStoredResponse(method: urlRequest.httpMethod ?? "GET", statusCode: head.statusCode),
           let url = urlRequest.url {
            invalidates = !httpCache.invalidateWithoutTouchingFiles(url)
        } else {
            invalidates = false
        }
        guard setsCookies || invalidates else { return nil }
        return {
            if setsCookies { session.storeCookies(from: head, for: urlRequest) }
            if invalidates { session.invalidateCachedResponse(after: head, for: urlRequest) }
        }
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


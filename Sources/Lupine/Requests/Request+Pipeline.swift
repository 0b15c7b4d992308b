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
    /// task: a redirect hop replaces the attempt's entry with the request it sends.
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
        mutableState.withLock { state in
            if isRedirectHop, !state.performedRequests.isEmpty { state.performedRequests.removeLast() }
            state.performedRequests.append(outgoing)
            Self.attemptTaskWillSend(outgoing, in: &state)
        }
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
        if let httpCache = session.httpCache,
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

    var redirectsSoFar: Int { mutableState.withLock { $0.machine.attempt?.redirectCount ?? 0 } }

    /// The request's redirect handler, else the Session's, else none (follow).
    var effectiveRedirectHandler: (any RedirectHandler)? {
        redirectHandler ?? session?.defaultRedirectHandler
    }

    /// The attempt's exchange ended (all hops); `error` is nil for a complete response.
    /// `cacheOffer` is offered to the cache first, on the root queue.
    func didCompleteTransfer(error transportError: AFError?, cacheOffer: CacheOffer? = nil) {
        let attempt = attemptTaskDidEnd(with: transportError)
        let now = Date()
        let (error, timeline, usedNetwork) = mutableState.withLock { state in
            let usedNetwork = state.machine.attempt?.hopUsesNetwork ?? true
            return (state.machine.transferCompleted(error: transportError, at: now), state.machine.timeline, usedNetwork)
        }
        let completion = TransferCompletion(transportError: transportError, error: error, timeline: timeline,
                                            attempt: attempt, cacheOffer: cacheOffer)
        // The rest of the request (validators, serializers, monitors, the cache's disk) is user
        // code and disk I/O: never on the transport's thread, and never entered synchronously
        // from it. A task awaiting the response from the network runs it itself (one hand-off,
        // the one back to the caller); otherwise it is queued on the root queue. A URLProtocol
        // class or the cache answers at once: queued, as Alamofire would, never handed over.
        if usedNetwork, handOverCompletion(completion) { return }
        if let runner = session?.rootQueueRunner {
            runner.async { self.completeTransfer(completion) }
        } else {
            underlyingQueue.async { self.completeTransfer(completion) }
        }
    }

    /// Hands the end of the exchange to a task that awaits the response, if one offered to run
    /// it: waking it now, before the validators, the monitors and the serializers run, costs the
    /// transport's thread less than waking it after them. False when no task takes it.
    ///
    /// Only when every handler of the request is awaited: a request with a closure handler too
    /// ends on the root queue, so that it never waits for a task that cannot run (a caller
    /// blocking the concurrency pool's threads until that handler is called).
    private func handOverCompletion(_ completion: TransferCompletion) -> Bool {
        let taker = mutableState.withLock { state -> (any ResponseHandlerStep)? in
            guard let taker = state.completionTaker else { return nil }
            var everyHandlerIsAwaited = true
            state.responseSerializers.forEach { if !$0.isAwaited { everyHandlerIsAwaited = false } }
            guard everyHandlerIsAwaited else { return nil }
            state.completionTaker = nil
            state.handedOverCompletion = completion
            return taker
        }
        guard let taker else { return false }
        if taker.wakeOneAwaiter() { return true }
        // Nobody waits any more: the end is taken back, unless it was taken meanwhile.
        return mutableState.withLock { state in
            defer { state.handedOverCompletion = nil }
            return state.handedOverCompletion == nil
        }
    }

    /// Offers `taker`, a handler whose task is about to wait for the response, to run the end of
    /// the exchange.
    func offerToRunCompletion(_ taker: any ResponseHandlerStep) {
        mutableState.withLock { state in
            // Once finishing, no exchange ends to hand over, and nothing would let the offer go.
            guard state.completionTaker == nil, !state.machine.hasBegunFinishing else { return }
            state.completionTaker = taker
        }
    }

    /// Runs the end of the exchange handed over to the calling task, on the root queue (on this
    /// thread when it is free).
    func runHandedOverCompletion() {
        // Moved out, not copied then cleared: a copy of its fields costs more than the move.
        let completion = mutableState.withLock { $0.handedOverCompletion.take() }
        guard let completion else { return }
        if let runner = session?.rootQueueRunner {
            runner.run(self, completion) { $0.completeTransfer($1) }
        } else {
            underlyingQueue.async { self.completeTransfer(completion) }
        }
    }

    /// What the end of an attempt's exchange carries to the root queue.
    struct TransferCompletion: Sendable {
        let transportError: AFError?
        /// The request's error once the transfer is complete.
        let error: AFError?
        let timeline: Timeline
        /// The attempt whose task reports the completion, if it has one.
        let attempt: Int?
        let cacheOffer: CacheOffer?
    }

    /// The end of an attempt's exchange, on the root queue: the cache offer, the validators, the
    /// attempt's completion, then the retry decision.
    private func completeTransfer(_ completion: TransferCompletion) {
        // A response the cache writes to disk is on disk before the request goes on (a handler
        // then finds it stored), without holding the root queue while the disk works.
        if let offer = completion.cacheOffer, let write = offerResponseToCache(offer) {
            write.whenDone { self.onRootQueue { self.completeSink(completion) } }
            return
        }
        completeSink(completion)
    }

    /// The sink's end of the attempt (a download's file), then the rest.
    private func completeSink(_ completion: TransferCompletion) {
        transferWillComplete(error: completion.error) { self.validateAndDecide(completion) }
    }

    /// The rest of the end of an attempt, once its sink is done: the validators, the attempt's
    /// completion, then the retry decision.
    private func validateAndDecide(_ completion: TransferCompletion) {
        let error = completion.error, timeline = completion.timeline
        if error == nil { runValidators() }
        // After the validators, as Alamofire reports `didCompleteTask`.
        notify(.didCompleteAttempt, about: (self as Request, error, timeline)) { $0.request($1.0, didCompleteAttemptWithError: $1.1, timeline: $1.2) }
        if let attempt = completion.attempt { attemptTaskDidReportCompletion(attempt, error: completion.transportError) }
        retryOrFinish(error: self.error)
    }

    /// Records a transport-level failure found by the sink (a body too large, a range that does
    /// not fit) and stops the exchange.
    func failTransfer(with code: URLError.Code, task: any TransportTask) {
        let url = lazyResponse?.url
        mutableState.withLock { state in
            if state.machine.error == nil {
                state.machine.error = .sessionTaskFailed(error: URLError(code, userInfo: [
                    NSURLErrorFailingURLErrorKey: url as Any,
                    NSLocalizedDescriptionKey: TransportErrorMapping.description(of: code),
                ]))
            }
        }
        task.cancel()
    }

    // MARK: Queues

    /// Runs `work` on the root queue: at once when already there, else queued behind the work
    /// there (never entered synchronously: transports call it from their threads).
    func onRootQueue(_ work: @escaping @Sendable () -> Void) {
        guard let runner = session?.rootQueueRunner else {
            underlyingQueue.async(execute: work)
            return
        }
        if runner.isCurrent {
            work()
        } else {
            runner.async(work)
        }
    }

    /// Runs `work` on the underlying (root) queue: at once when already there, else dispatched.
    func onUnderlyingQueue(_ work: @escaping @Sendable () -> Void) {
        if isOnUnderlyingQueue {
            work()
        } else {
            underlyingQueue.async(execute: work)
        }
    }

    /// Whether the calling thread runs on the root queue, where the request's queue work may run.
    var isOnUnderlyingQueue: Bool {
        session?.rootQueueRunner.isCurrent ?? false
    }

    /// Whether serialization may run at once: on the root queue, with the Session's own
    /// serialization queue (it targets the root queue).
    var canRunOnSerializationQueueNow: Bool {
        guard let session else { return false }
        return session.serializesOnRootQueue && session.rootQueueRunner.isCurrent
    }

    /// Runs `work` on the serialization queue: at once when on the root queue and the
    /// serialization queue is the Session's own (it targets the root queue), else dispatched.
    func onSerializationQueue(_ work: @escaping @Sendable () -> Void) {
        if canRunOnSerializationQueueNow {
            work()
        } else {
            serializationQueue.async(execute: work)
        }
    }

    // MARK: Retry and finish

    func retryOrFinish(error: AFError?) {
        guard let error, !isCancelled, let session else {
            finish()
            return
        }
        session.retryResult(for: self, dueTo: error) { result in
            switch result {
            case .doNotRetry:
                self.finish()
            case let .doNotRetryWithError(retryError):
                // Session.retryResult has wrapped it in .requestRetryFailed already.
                self.finish(error: retryError.asAFError ?? .requestRetryFailed(retryError: retryError, originalError: error))
            case .retry, .retryWithDelay:
                session.retryRequest(self, withDelay: result.delay)
            }
        }
    }

    /// A retry was decided: false when the request was cancelled meanwhile (it finishes instead).
    func scheduleRetry() -> Bool {
        mutableState.withLock { $0.machine.scheduleRetry() }
    }

    /// The first attempt's setup begins; false when the request is cancelled or already busy.
    func beginSetup() -> Bool {
        mutableState.withLock { $0.machine.beginSetup() }
    }

    /// The scheduled retry begins: the per-attempt state is reset, the retry reported, and the
    /// Session sets the new attempt up. A request cancelled while it waited does nothing more.
    func beginRetry() {
        let begins = mutableState.withLock { state -> Bool in
            guard state.machine.beginRetry() else { return false }
            state.responseSerializerCompletions.removeAll()
            state.isRunningSerializer = false
            return true
        }
        guard begins else { return }
        uploadCounts.set(total: 0, completed: 0)
        downloadCounts.set(total: 0, completed: 0)
        resetForRetry()
        notify(.isRetrying, about: self as Request) { $0.requestIsRetrying($1) }
        session?.setUpRetry(of: self)
    }

    /// Ends the request: records `error`, reports it, and runs the response serializers.
    func finish(error: AFError? = nil) {
        let shouldFinish = mutableState.withLock { state in
            guard state.machine.beginFinishing(error: error) else { return false }
            // No exchange ends after this: a task's offer to run its end goes (it holds the task's
            // handler, which holds the request).
            state.completionTaker = nil
            return true
        }
        guard shouldFinish else { return }
        attemptTaskDidEndWithoutExchange()
        notify(.didFinish, about: self as Request) { $0.requestDidFinish($1) }
        processNextResponseSerializer()
    }

    // MARK: Progress

    func updateUploadProgress(totalBytesSent: Int64, totalBytesExpected: Int64?) {
        uploadCounts.set(total: totalBytesExpected ?? -1, completed: totalBytesSent)
        if let handler = uploadProgressHandler {
            let progress = uploadProgress
            handler.queue.async { handler.handler(progress) }
        }
    }

    /// Sets the download counts and reports them to the progress handler. With `notifying: false`
    /// (a response head, before any body byte) only the counts change: as in Alamofire, whose
    /// handler runs for received body bytes (and a resumed download's offset), an empty body
    /// reports no progress.
    func updateDownloadProgress(expected: Int64?, received: Int64, notifying: Bool = true) {
        downloadCounts.set(total: expected, completed: received)
        if notifying, let handler = downloadProgressHandler {
            let progress = downloadProgress
            handler.queue.async { handler.handler(progress) }
        }
    }
}

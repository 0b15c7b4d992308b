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
        mutableState.withLockedValue { state in
            state.requests.append(urlRequest)
            if state.startTime == nil { state.startTime = Date() }
        }
        notify { $0.request(self, didCreateInitialURLRequest: urlRequest) }
    }

    func didFailToCreateURLRequest(with error: AFError) {
        self.error = error
        notify { $0.request(self, didFailToCreateURLRequestWithError: error) }
        callCURLHandler()
        mutableState.withLockedValue { $0.lifecycle.transferCompleted() }
        retryOrFinish(error: error)
    }

    func didAdaptInitialRequest(_ initialRequest: URLRequest, to adaptedRequest: URLRequest) {
        mutableState.withLockedValue { $0.requests.append(adaptedRequest) }
        notify { $0.request(self, didAdaptInitialRequest: initialRequest, to: adaptedRequest) }
    }

    func didFailToAdaptURLRequest(_ initialRequest: URLRequest, withError error: AFError) {
        self.error = error
        notify { $0.request(self, didFailToAdaptURLRequest: initialRequest, withError: error) }
        mutableState.withLockedValue { $0.lifecycle.transferCompleted() }
        retryOrFinish(error: error)
    }

    /// The attempt's body could not be made (the error is already recorded and reported).
    func didFailToCreateBody(with error: AFError) {
        mutableState.withLockedValue { $0.lifecycle.transferCompleted() }
        retryOrFinish(error: error)
    }

    /// The URLRequest of this attempt is final: handlers see it, then the exchange starts (or waits
    /// for `resume()`).
    func didCreateURLRequest(_ urlRequest: URLRequest) {
        let (handler, transfer) = mutableState.withLockedValue { state in
            let transfer = state.lifecycle.beginTransfer()
            if transfer == .waitForResume { state.pendingURLRequest = urlRequest }
            return (state.urlRequestHandler, transfer)
        }
        notify { $0.request(self, didCreateURLRequest: urlRequest) }
        if let handler { handler.queue.async { handler.handler(urlRequest) } }
        callCURLHandler()
        if transfer != .abandon { attemptTaskDidBegin(with: urlRequest) }
        if transfer == .start { startExchange(urlRequest) }
    }

    private func callCURLHandler() {
        guard let handler = mutableState.withLockedValue({ $0.cURLHandler }) else { return }
        let description = cURLDescription()
        handler.queue.async { handler.handler(description) }
    }

    // MARK: Exchange

    /// Sends `urlRequest` on the Session's transport, as one hop of the current attempt.
    ///
    /// `performedRequests` holds one entry per attempt, like the `currentRequest` of a URLSession
    /// task: a redirect hop replaces the attempt's entry with the request it sends.
    func startExchange(_ urlRequest: URLRequest, isRedirectHop: Bool = false) {
        guard let session = delegate as? Session else {
            finish(error: .sessionDeinitialized)
            return
        }
        let sentRequest = session.requestApplyingSessionDefaults(urlRequest)
        let deadline = mutableState.withLockedValue { state in
            if !isRedirectHop || state.attemptDeadline == nil { state.attemptDeadline = session.attemptDeadline() }
            return state.attemptDeadline
        }
        let cacheAction = usesHTTPCache ? session.cacheAction(for: sentRequest) : nil
        let replayed = cacheAction?.replayed
        // A URLProtocol class of the Session may answer in place of the network (any scheme it
        // accepts, and no TLS: no trust evaluation).
        let urlProtocolClass = session.urlProtocolClass(for: sentRequest, request: self)
        // A stored response that answers without the network needs no transport request.
        var transportRequest: TransportRequest?
        do {
            try sentRequest.lupineValidateHeaderFields()
            if case .fail? = cacheAction { throw Self.cacheMissError(for: sentRequest.url) }
            if replayed == nil {
                transportRequest = try session.transportRequest(for: sentRequest, body: transportBody(for: sentRequest), deadline: deadline,
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
        let proceed = mutableState.withLockedValue { state -> Bool in
            guard state.lifecycle.state != .cancelled else { return false }
            state.pendingURLRequest = nil
            if isRedirectHop, !state.performedRequests.isEmpty { state.performedRequests.removeLast() }
            state.performedRequests.append(sentRequest)
            Self.attemptTaskWillSend(sentRequest, in: &state)
            state.response = nil
            state.responseHeaderFields = []
            return true
        }
        guard proceed else {
            // Cancelled just before sending: the request's error is already `.explicitlyCancelled`;
            // its task ends as URLSession ends a cancelled task.
            didCompleteTransfer(error: .sessionTaskFailed(error: URLError(.cancelled, userInfo: [
                NSURLErrorFailingURLErrorKey: sentRequest.url as Any,
                NSLocalizedDescriptionKey: TransportErrorMapping.description(of: .cancelled),
            ])))
            return
        }
        // A redirect hop continues the attempt's exchange, as it continues a URLSession task.
        if !isRedirectHop { notify { $0.requestDidResumeExchange(self) } }
        if let answer = proxyAuthorizationAnswer(for: transportRequest?.proxy) { transportRequest?.proxy?.authorization = answer }
        let exchange = RequestExchange(request: self, urlRequest: sentRequest, proxy: transportRequest?.proxy, cacheAction: cacheAction)
        // A fresh stored response answers without the network, through the same exchange events.
        let replay = replayed.map { CacheReplayTask(stored: $0, events: exchange, queue: underlyingQueue) }
        let task: any TransportTask
        if let replay {
            task = replay
        } else if let transportRequest {
            task = urlProtocolClass.map { protocolClass in
                session.urlProtocolTransport(protocolClass, for: sentRequest, request: self, cacheAction: cacheAction)
                    .execute(transportRequest, events: exchange)
            } ?? openExchange(transportRequest, on: session, events: exchange)
        } else {
            // Not reached: without a replay, the transport request was made above.
            didCompleteTransfer(error: .sessionTaskFailed(error: URLError(.badURL)))
            return
        }
        let cancelled = mutableState.withLockedValue { state -> Bool in
            state.transportTask = task
            return state.lifecycle.state == .cancelled
        }
        // Paused at once when a reason is in force (a hop that starts while suspended).
        readDemand.attach(task)
        if cancelled { task.cancel() }
        replay?.start()
    }

    /// Every response head that came from the network, redirect hops and challenges included:
    /// its cookies are stored, and a success answering an unsafe method invalidates what the cache
    /// holds for the URL.
    func exchangeDidReceiveHeadFromNetwork(_ head: TransportResponseHead, sentAs urlRequest: URLRequest) {
        guard let session = delegate as? Session else { return }
        // Synchronously: the next redirect hop reads the storage as soon as this hop ends.
        session.storeCookies(from: head, for: urlRequest)
        // Off the transport's thread; queued before the completion of the request. Only an unsafe
        // method's success invalidates: checked here, so that a GET costs no dispatch.
        guard session.httpCache != nil,
              HTTPCacheRules.invalidatesStoredResponse(method: urlRequest.httpMethod ?? "GET", statusCode: head.statusCode)
        else { return }
        underlyingQueue.async { session.invalidateCachedResponse(after: head, for: urlRequest) }
    }

    func exchangeDidSendRequest(_ urlRequest: URLRequest) {
        mutableState.withLockedValue { $0.sentTime = Date() }
        notify { $0.request(self, didSendURLRequest: urlRequest) }
    }

    /// A final (non-redirect) response head arrived.
    func exchangeDidReceive(_ response: HTTPURLResponse, head: TransportResponseHead, task: any TransportTask) {
        mutableState.withLockedValue { state in
            // A transport may report events before `execute` returns: keep its handle for resume.
            if state.transportTask == nil { state.transportTask = task }
            state.response = response
            state.responseHeaderFields = head.headerFields
            state.responseHTTPVersion = head.httpVersion
            state.firstByteTime = Date()
        }
        notify { $0.request(self, didReceiveResponse: response) }
        didReceiveResponseHead(response, task: task)
    }

    func exchangeDidReceive(bodyPart: Data, task: any TransportTask) {
        didReceiveBodyPart(bodyPart, task: task)
    }

    /// A redirect hop completed; the next hop starts (unless the request was cancelled meanwhile).
    func exchangeDidRedirect(to nextRequest: URLRequest) {
        mutableState.withLockedValue { state in
            state.redirectCount += 1
            state.transportTask = nil
        }
        startExchange(nextRequest, isRedirectHop: true)
    }

    var redirectsSoFar: Int { mutableState.withLockedValue { $0.redirectCount } }

    /// The request's redirect handler, else the Session's, else none (follow).
    var effectiveRedirectHandler: (any RedirectHandler)? {
        redirectHandler ?? (delegate as? Session)?.redirectHandler
    }

    /// The attempt's exchange ended (all hops); `error` is nil for a complete response.
    func didCompleteTransfer(error transportError: AFError?) {
        let attempt = attemptTaskDidEnd(with: transportError)
        let (error, timeline) = mutableState.withLockedValue { state in
            state.transportTask = nil
            state.pendingURLRequest = nil
            state.completedTime = Date()
            state.lifecycle.transferCompleted()
            // An error already recorded (cancellation, a refused response) wins over a later one.
            if state.error == nil { state.error = transportError }
            return (state.error, state.timeline)
        }
        underlyingQueue.async {
            self.transferWillComplete(error: error)
            if error == nil { self.runValidators() }
            // After the validators, as Alamofire reports `didCompleteTask`.
            self.notify { $0.request(self, didCompleteAttemptWithError: error, timeline: timeline) }
            if let attempt { self.attemptTaskDidReportCompletion(attempt, error: transportError) }
            self.retryOrFinish(error: self.error)
        }
    }

    // MARK: Retry and finish

    func retryOrFinish(error: AFError?) {
        guard let error, !isCancelled, let delegate else {
            finish()
            return
        }
        delegate.retryResult(for: self, dueTo: error) { result in
            switch result {
            case .doNotRetry:
                self.finish()
            case let .doNotRetryWithError(retryError):
                self.finish(error: .requestRetryFailed(retryError: retryError, originalError: error))
            case .retry, .retryWithDelay:
                delegate.retryRequest(self, withDelay: result.delay)
            }
        }
    }

    /// Resets the per-attempt state before a retry and reports it.
    func prepareForRetry() {
        mutableState.withLockedValue { state in
            state.retryCount += 1
            state.error = nil
            state.redirectCount = 0
            state.response = nil
            state.responseHeaderFields = []
            state.responseSerializerCompletions = []
            state.isRunningSerializer = false
            state.sentTime = nil
            state.firstByteTime = nil
            state.completedTime = nil
        }
        uploadCounts.set(total: 0, completed: 0)
        downloadCounts.set(total: 0, completed: 0)
        resetForRetry()
        notify { $0.requestIsRetrying(self) }
    }

    /// Ends the request: records `error`, reports it, and runs the response serializers.
    func finish(error: AFError? = nil) {
        let shouldFinish = mutableState.withLockedValue { state -> Bool in
            if let error { state.error = error }
            state.transportTask = nil
            return state.lifecycle.beginFinishing()
        }
        guard shouldFinish else { return }
        attemptTaskDidEndWithoutExchange()
        notify { $0.requestDidFinish(self) }
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

    func updateDownloadProgress(expected: Int64?, received: Int64) {
        downloadCounts.set(total: expected, completed: received)
        if let handler = downloadProgressHandler {
            let progress = downloadProgress
            handler.queue.async { handler.handler(progress) }
        }
    }
}

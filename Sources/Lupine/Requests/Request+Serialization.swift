import Foundation

// Response handlers are queued serializers: they run one at a time in the order they were added,
// once the request finishes. Their completions are dispatched together, in order, after the last
// one has run, so that handlers of one request complete in the order they were added. A
// serializer that triggers a retry leaves its completion out: after the retry every serializer
// runs again on the new outcome.
extension Request {
    /// Queues a closure `serializer` (streams, WebSocket): see `appendResponseHandler(_:startsOnCallingThread:)`.
    func appendResponseSerializer(_ serializer: @escaping @Sendable () -> Void) {
        appendResponseHandler(.closure(serializer), startsOnCallingThread: false)
    }

    /// Queues `handler`; resumes the request automatically when the Session (or the request's
    /// own setting) says so.
    ///
    /// The async API (`serializing...`, whose chain ends there) passes `startsOnCallingThread`:
    /// the request then leaves for the transport from the caller's thread when the root queue is
    /// free, the one hand-off into the pipeline. A closure handler keeps Alamofire's asynchronous
    /// resume; a handler or validator chained right after it is in place before the answer is
    /// validated, even one a URLProtocol stub or the cache gives at once (see
    /// `completeTransferOnceTheCallerHasLeft`).
    func appendResponseHandler(_ handler: QueuedResponseHandler, startsOnCallingThread: Bool) {
        let (mayResume, runNow) = mutableState.withLock { state in
            state.responseSerializers.append(handler)
            // Finished already: this serializer runs alone, on the stored outcome.
            return state.machine.serializerAdded()
        }
        if runNow {
            underlyingQueue.async { self.processNextResponseSerializer() }
        }
        guard mayResume else { return }
        let runner = defaults.rootQueueRunner
        if startsOnCallingThread {
            runner.run(self) { $0.resumeIfAutomatic() }
        } else {
            callersSchedulingStart.add(1, ordering: .sequentiallyConsistent)
            runner.async { self.startNotingTheCaller() }
            callersSchedulingStart.subtract(1, ordering: .sequentiallyConsistent)
        }
    }

    /// Resumes the request when the Session (or the request's own setting) says handlers do.
    private func resumeIfAutomatic() {
        // A request whose Session is gone (deinitialized) does not start by itself.
        if shouldAutomaticallyResume ?? (environment != nil && defaults.startsImmediately) {
            resume()
        }
    }

    /// Resumes the request (when automatic) from the root queue, noting whether the caller that
    /// scheduled this is still inside that call (see `completeTransferOnceTheCallerHasLeft`).
    private func startNotingTheCaller() {
        if callersSchedulingStart.load(ordering: .sequentiallyConsistent) > 0 {
            callerWasInsideAtStart.store(true, ordering: .sequentiallyConsistent)
        }
        resumeIfAutomatic()
    }

    /// Called by each serializer when its result is ready; `completion` dispatches it to the caller.
    func responseSerializerDidComplete(completion: @escaping @Sendable () -> Void) {
        responseHandlerDidComplete(.closure(completion))
    }

    /// Called by each handler when its result is ready, to be delivered after the last one.
    func responseHandlerDidComplete(_ completion: QueuedResponseHandler) {
        mutableState.withLock { state in
            state.responseSerializerCompletions.append(completion)
            state.isRunningSerializer = false
        }
        processNextResponseSerializer()
    }

    func processNextResponseSerializer() {
        enum Next { case run(QueuedResponseHandler), wait, finished(SmallList<QueuedResponseHandler>, [@Sendable () -> Void]) }
        let next = mutableState.withLock { state -> Next in
            guard !state.isRunningSerializer else { return .wait }
            let index = state.responseSerializerCompletions.count
            if index < state.responseSerializers.count {
                state.isRunningSerializer = true
                return .run(state.responseSerializers[index])
            }
            let completions = state.responseSerializerCompletions
            state.responseSerializers.removeAll()
            state.responseSerializerCompletions.removeAll()
            state.machine.serializersCompleted()
            let finishHandlers = state.finishHandlers
            state.finishHandlers.removeAll()
            return .finished(completions, finishHandlers)
        }
        switch next {
        case let .run(serializer):
            serializer.run()
        case .wait:
            break
        case let .finished(completions, finishHandlers):
            completions.forEach { $0.deliver() }
            finishHandlers.forEach { $0() }
            cleanup()
        }
    }

    /// Runs `handler` once the request has finished (immediately if it already has).
    func onFinish(_ handler: @escaping @Sendable () -> Void) {
        let runNow = mutableState.withLock { state -> Bool in
            if state.machine.isDone { return true }
            state.finishHandlers.append(handler)
            return false
        }
        if runNow { handler() }
    }

    /// Finishes `handler`, whose result may be a failure: unless that failure makes a retrier
    /// retry the request, the handler delivers its result as it is, or with the
    /// `.requestRetryFailed` error that replaces it.
    ///
    /// Every failing serializer asks, the request's own error passed on included (a request that
    /// failed was asked about once when its attempt ended): Alamofire asks for each serializer's
    /// failure, so a retrier counting its calls, or changing its answer, sees the same calls here.
    func completeSerialization<Reading: ResponseReading>(failure serializationError: AFError?, handler: ResponseHandler<Reading>) {
        guard let serializationError, !isCancelled, let environment else {
            responseHandlerDidComplete(.step(handler))
            return
        }
        environment.decideRetry(of: self, dueTo: serializationError) { retryResult in
            if case let .doNotRetryWithError(retryError) = retryResult {
                handler.replaceResult(with: retryError.asAFError
                    ?? .requestRetryFailed(retryError: retryError, originalError: serializationError))
            }
            // A retry is the environment's to schedule; it never comes here.
            self.responseHandlerDidComplete(.step(handler))
        }
    }
}

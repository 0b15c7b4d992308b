import Foundation

// Response handlers are queued serializers: they run one at a time in the order they were added,
// once the request finishes. Their completions are dispatched together, in order, after the last
// one has run, so that handlers of one request complete in the order they were added. A
// serializer that triggers a retry leaves its completion out: after the retry every serializer
// runs again on the new outcome. The queue is the state machine's (`ResponseHandlerQueue`): each
// event here is decided under the lock and carried out after it.
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
        let mayResume: Bool
        switch mutableState.withLock({ $0.machine.responseHandlerAdded(handler) }) {
        case .nothing:
            return
        case .resumeIfAutomatic:
            mayResume = true
        case let .runQueueAgain(thenResumeIfAutomatic):
            // Finished already: this serializer runs alone, on the stored outcome.
            underlyingQueue.async { self.processNextResponseSerializer() }
            mayResume = thenResumeIfAutomatic
        }
        guard mayResume else { return }
        let runner = defaults.rootQueueRunner
        if startsOnCallingThread {
            runner.run(self) { $0.resumeIfAutomatic() }
        } else {
            callersSchedulingStart.add(1, ordering: .sequentiallyConsistent)
            // Queued with the request as the context of a C function: no block, no closure.
            runner.willQueue()
            runner.entry.async(retaining: self) { context in
                SerialQueueEntry.takeRetained(context, as: Request.self)?.startQueuedNotingTheCaller()
            }
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

    /// `startNotingTheCaller()`, queued on the root queue after `RootQueueRunner.willQueue()`.
    private func startQueuedNotingTheCaller() {
        defaults.rootQueueRunner.runQueued { startNotingTheCaller() }
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

    /// Called by each handler when its result is ready, to be delivered after the last one; the
    /// next handler is chosen in the same lock take.
    func responseHandlerDidComplete(_ completion: QueuedResponseHandler) {
        carryOut(mutableState.withLock { $0.machine.responseHandlerCompleted(completion) })
    }

    /// Runs the next response handler, if none runs; once they have all run, delivers their
    /// completions and calls the finish handlers.
    func processNextResponseSerializer() {
        carryOut(mutableState.withLock { $0.machine.nextResponseHandler() })
    }

    private func carryOut(_ next: ResponseHandlerQueue.NextHandler) {
        switch next {
        case let .run(handler):
            handler.run()
        case .wait:
            break
        case let .drained(completions, finishHandlers):
            completions.forEach { $0.deliver() }
            finishHandlers.forEach { $0() }
            cleanup()
        }
    }

    /// Runs `handler` once the request has finished (immediately if it already has).
    func onFinish(_ handler: @escaping @Sendable () -> Void) {
        let runNow = mutableState.withLock { $0.machine.finishHandlerAdded(handler) }
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

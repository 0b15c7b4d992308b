import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The end of an attempt as it happens to a Request: the exchange's completion carried off the
// transport's thread (to the awaiting task or the root queue), the cache offer, the sink, the
// validators, then the retry decision or the finish; the queues this runs on; progress counts.
extension Request {
    /// The attempt's exchange ended (all hops); `error` is nil for a complete response.
    /// `cacheOffer` is offered to the cache first, on the root queue.
    func didCompleteTransfer(error transportError: AFError?, cacheOffer: CacheOffer? = nil) {
        let taskOutcome = attemptTaskOutcome(error: transportError)
        let now = Date()
        // The task's end, the transfer's and the hand-over are decided in one lock take, with
        // the queue the closure handlers deliver on when the end is not handed to a task.
        let (action, handlersQueue) = mutableState.withLock { state in
            let action = state.machine.exchangeEnded(taskOutcome, cacheOffer: cacheOffer, at: now)
            guard case .runOnRootQueue(_, answeredAtOnce: false) = action else { return (action, nil as DispatchQueue?) }
            return (action, state.machine.responseHandlers.queueEveryHandlerDeliversOn)
        }
        // The rest of the request (validators, serializers, monitors, the cache's disk) is user
        // code and disk I/O: never on the transport's thread, and never entered synchronously
        // from it. A task awaiting the response from the network runs it itself (one hand-off,
        // the one back to the caller): waking it now, before the validators, the monitors and the
        // serializers run, costs the transport's thread less than waking it after them.
        // Otherwise the end is queued on the root queue.
        let completion: TransferCompletion, answeredAtOnce: Bool
        switch action {
        case let .wake(taker):
            if taker.wakeOneAwaiter() { return }
            // Nobody waits any more: the end is taken back, unless it was taken meanwhile.
            guard let takenBack = mutableState.withLock({ $0.machine.takeHandedOverCompletion() }) else { return }
            (completion, answeredAtOnce) = (takenBack, false)
        case let .runOnRootQueue(end, atOnce):
            (completion, answeredAtOnce) = (end, atOnce)
        }
        let runner = defaults.rootQueueRunner
        // An answer from the network took a round trip: the caller has had that long to chain.
        let callerWasInside = callerWasInsideAtStart.exchange(false, ordering: .sequentiallyConsistent) && answeredAtOnce
        // The end waits in the request's state, and the closure queued holds the request alone
        // (it is the closure's context): one allocation fewer than a closure holding the end.
        mutableState.withLock { $0.queuedTransferEnds.append(QueuedTransferEnd(completion: completion, callerWasInside: callerWasInside)) }
        // Queued with the request as the context of a C function: no block, no closure.
        if let handlersQueue, runsEndOnHandlersQueue(handlersQueue, runner: runner) {
            if let entry = defaults.callbackQueueEntry, entry.queue === handlersQueue {
                entry.async(retaining: self) { context in
                    SerialQueueEntry.takeRetained(context, as: Request.self)?.runQueuedTransferEndFromHandlersQueue()
                }
            } else {
                handlersQueue.async { self.runQueuedTransferEndFromHandlersQueue() }
            }
            return
        }
        runner.willQueue()
        runner.entry.async(retaining: self) { context in
            SerialQueueEntry.takeRetained(context, as: Request.self)?.runQueuedTransferEnd()
        }
    }

    /// Whether the end of an exchange answered from the network goes to `handlersQueue`, the queue
    /// every handler of the request delivers on, rather than to the root queue.
    ///
    /// Queued on the root queue, the end wakes a thread there, whose delivery then wakes another
    /// on the handlers' queue: two hand-offs where the contract asks for one. When the handlers'
    /// queue is the Session's own callback queue (the default one on Linux) and the root queue is
    /// free, the end goes to the callback queue instead, and runs from there on the root queue
    /// synchronously (`RootQueueRunner.run`), as the async API's awaiting task does; the
    /// deliveries it queues on the callback queue then run next on the same thread. Only the
    /// Session's own queue is used so: no caller's code waits on it from the root queue, so
    /// holding it while the root-queue work runs makes no one wait. The main queue and a
    /// caller's queue are never held, and a root queue found busy keeps the end in its order there.
    /// Entering the root queue synchronously costs two allocations (`DispatchQueue.sync` makes a
    /// block and copies it), against a thread wake-up saved.
    private func runsEndOnHandlersQueue(_ handlersQueue: DispatchQueue, runner: RootQueueRunner) -> Bool {
        // The default queue is the Session's own (never `.main`, whose `DispatchQueue.main` is a
        // new object on each read on Linux, an allocation that never compares identical).
        handlersQueue === defaultQueue && handlersQueue !== underlyingQueue && runner.isFreeForWorkFromOutside
    }

    /// Runs the oldest end queued by `didCompleteTransfer` on the handlers' queue: on the root
    /// queue from this thread when it is free, else queued there.
    private func runQueuedTransferEndFromHandlersQueue() {
        defaults.rootQueueRunner.run(self) { $0.runOldestQueuedTransferEnd() }
    }

    /// Runs the oldest end queued by `didCompleteTransfer`, on the root queue.
    private func runQueuedTransferEnd() {
        defaults.rootQueueRunner.runQueued { runOldestQueuedTransferEnd() }
    }

    private func runOldestQueuedTransferEnd() {
        guard let queued = mutableState.withLock({ $0.queuedTransferEnds.removeFirst() }) else { return }
        completeTransferOnceTheCallerHasLeft(queued.completion, callerWasInside: queued.callerWasInside)
    }

    /// Offers `taker`, a handler whose task is about to wait for the response, to run the end of
    /// the exchange.
    func offerToRunCompletion(_ taker: any ResponseHandlerStep) {
        mutableState.withLock { $0.machine.offerToTakeCompletion(taker) }
    }

    /// Runs the end of the exchange handed over to the calling task, on the root queue (on this
    /// thread when it is free).
    func runHandedOverCompletion() {
        let completion = mutableState.withLock { $0.machine.takeHandedOverCompletion() }
        guard let completion else { return }
        defaults.rootQueueRunner.run(self, completion) { $0.completeTransfer($1) }
    }

    /// Runs `completeTransfer` once no caller is inside the handler call that started the request.
    ///
    /// A handler or validator chained right after the first handler must apply to the answer,
    /// even one a URLProtocol stub or the cache gives at once. The request starts at once (as
    /// Alamofire's does, from the root queue); it is the validators and serializers that wait
    /// for the caller. On the usual path the caller left long before the answer came, and
    /// nothing waits. A caller still inside (its thread set aside by the scheduler on a busy
    /// machine, while the threads it woke answered), or seen inside when an instant answer's
    /// request started, is looked at again a moment later, on a timer, so that the root queue's
    /// thread sleeps and the caller runs; once it has left, the end waits one moment more, for
    /// what the caller chains right after.
    private func completeTransferOnceTheCallerHasLeft(_ completion: TransferCompletion, callerWasInside: Bool) {
        let callerIsInside = callersSchedulingStart.load(ordering: .sequentiallyConsistent) > 0
        guard callerIsInside || callerWasInside else {
            completeTransfer(completion)
            return
        }
        let runner = defaults.rootQueueRunner
        runner.queue.asyncAfter(deadline: .now() + .microseconds(250)) {
            runner.async(self, (completion, callerIsInside)) { $0.completeTransferOnceTheCallerHasLeft($1.0, callerWasInside: $1.1) }
        }
    }

    /// An end of an exchange waiting for its turn on the root queue (`didCompleteTransfer`).
    struct QueuedTransferEnd: Sendable {
        let completion: TransferCompletion
        /// Whether the caller was inside the call that started the request, for an instant answer.
        let callerWasInside: Bool
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
        // Without a sink to finish, no closure is made for it (one allocation per request).
        guard hasSinkToComplete else {
            validateAndDecide(completion)
            return
        }
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
        let runner = defaults.rootQueueRunner
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
        defaults.rootQueueRunner.isCurrent
    }

    /// Whether serialization may run at once: on the root queue, with the Session's own
    /// serialization queue (it targets the root queue).
    var canRunOnSerializationQueueNow: Bool {
        defaults.serializesOnRootQueue && defaults.rootQueueRunner.isCurrent
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
        guard let error, !isCancelled, let environment else {
            finish()
            return
        }
        environment.decideRetry(of: self, dueTo: error) { result in
            switch result {
            case let .doNotRetryWithError(retryError):
                // Session.retryResult has wrapped it in .requestRetryFailed already.
                self.finish(error: retryError.asAFError ?? .requestRetryFailed(retryError: retryError, originalError: error))
            case .doNotRetry, .retry, .retryWithDelay:
                // A retry is the environment's to schedule; it never comes here.
                self.finish()
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
        guard mutableState.withLock({ $0.machine.beginRetry() }) else { return }
        uploadCounts.set(total: 0, completed: 0)
        downloadCounts.set(total: 0, completed: 0)
        resetForRetry()
        notify(.isRetrying, about: self as Request) { $0.requestIsRetrying($1) }
        environment?.prepareAttempt(of: self)
    }

    /// Ends the request: records `error`, reports it, and runs the response serializers.
    func finish(error: AFError? = nil) {
        guard mutableState.withLock({ $0.machine.beginFinishing(error: error) }) else { return }
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

import Foundation

// The events of a request's response handlers and of the end of its exchanges, where they meet
// the lifecycle: each answers with one action, that the request carries out after the lock.
extension RequestStateMachine {
    /// What the request does once a response handler is added.
    enum HandlerAddedAction: Equatable {
        case nothing
        /// Resume the request if handlers start it (the Session's, or the request's own, setting).
        case resumeIfAutomatic
        /// The handlers drained before: run the queue again (this handler alone, on the stored
        /// outcome), from the underlying queue; then, with `thenResumeIfAutomatic`, as above.
        case runQueueAgain(thenResumeIfAutomatic: Bool)
    }

    /// A response handler was added: a finished request goes back to `.resumed` to run it.
    mutating func responseHandlerAdded(_ handler: QueuedResponseHandler) -> HandlerAddedAction {
        responseHandlers.handlerAdded(handler)
        let (mayResume, runsNow) = serializerAdded()
        switch (runsNow, mayResume) {
        case (false, false): return .nothing
        case (false, true): return .resumeIfAutomatic
        case let (true, mayResume): return .runQueueAgain(thenResumeIfAutomatic: mayResume)
        }
    }

    /// The request finished, or a handler was added to a finished one: the next handler, if none
    /// runs. Once drained, the request is done.
    mutating func nextResponseHandler() -> ResponseHandlerQueue.NextHandler {
        markDoneIfDrained(responseHandlers.nextHandler())
    }

    /// The running handler's result is ready: `completion` is delivered after the last handler.
    mutating func responseHandlerCompleted(_ completion: QueuedResponseHandler) -> ResponseHandlerQueue.NextHandler {
        markDoneIfDrained(responseHandlers.handlerCompleted(completion))
    }

    private mutating func markDoneIfDrained(_ next: ResponseHandlerQueue.NextHandler) -> ResponseHandlerQueue.NextHandler {
        if case .drained = next { serializersCompleted() }
        return next
    }

    /// `handler` runs once the request is done. Returns true when it is done already: the caller
    /// runs the handler now.
    mutating func finishHandlerAdded(_ handler: @escaping @Sendable () -> Void) -> Bool {
        guard !isDone else { return true }
        responseHandlers.finishHandlerAdded(handler)
        return false
    }

    /// A task awaiting the response offers to run the end of the exchange. Once finishing, no
    /// exchange ends to hand over, and nothing would let the offer go: it is refused.
    mutating func offerToTakeCompletion(_ taker: any ResponseHandlerStep) {
        guard !hasBegunFinishing else { return }
        responseHandlers.offerToTakeCompletion(taker)
    }

    /// The attempt's exchange ended (all hops): the task's own values are frozen, the transfer
    /// completes (`transferCompleted(error:at:)`), and its end goes to the task that offered to
    /// run it, or to the root queue.
    mutating func exchangeEnded(_ taskOutcome: AttemptTaskOutcome, cacheOffer: Request.CacheOffer?,
                                at time: Date) -> ResponseHandlerQueue.TransferEndAction {
        let attempt = taskEnds(taskOutcome)
        let usedNetwork = hopUsesNetwork
        let error = transferCompleted(error: taskOutcome.error, at: time)
        let completion = Request.TransferCompletion(transportError: taskOutcome.error, error: error, timeline: timeline,
                                                    attempt: attempt, cacheOffer: cacheOffer)
        // A URLProtocol class or the cache answers at once, without a round trip to the network.
        return responseHandlers.transferEnded(completion, answeredAtOnce: !usedNetwork)
    }

    /// The end of the exchange handed over, taken once (nil: taken already).
    mutating func takeHandedOverCompletion() -> Request.TransferCompletion? {
        responseHandlers.takeHandedOverCompletion()
    }
}

import Dispatch

/// The response handlers of a request and the end of its exchange as handed to an awaiting task:
/// a part of `RequestStateMachine` (behind the request's one lock), with events in and what the
/// request must do out. It performs no I/O and calls nothing (`ResponseHandlerQueueTests`).
///
/// Handlers (serializers) run one at a time, in the order added, once the request finishes. Each
/// ends by handing back its completion; the completions are delivered together, in order, after
/// the last handler has run, so that the handlers of one request complete in the order they were
/// added, then the finish handlers run. A handler that makes the request retry hands back
/// nothing: when the retry begins, the completions of the round are dropped, and every handler
/// runs again on the new outcome.
struct ResponseHandlerQueue {
    /// Every handler added, in order; those before index `completions.count` have run this round.
    private(set) var handlers = SmallList<QueuedResponseHandler>()
    private(set) var completions = SmallList<QueuedResponseHandler>()
    /// Whether a handler runs now (it has not handed back its completion).
    private(set) var isRunningHandler = false
    /// Called once the handlers have drained; used by async streams, WebSocket, downloads.
    private(set) var finishHandlers: [@Sendable () -> Void] = []

    /// A task awaiting the response that offered to run the end of the exchange itself, and the
    /// end handed to it (see `Request.didCompleteTransfer(error:cacheOffer:)`), taken once.
    private(set) var completionTaker: (any ResponseHandlerStep)?
    private(set) var handedOverCompletion: Request.TransferCompletion?

    // MARK: Handlers

    /// What the request does next with its handlers.
    enum NextHandler {
        /// Run this handler (on the serialization queue, as the handler itself arranges).
        case run(QueuedResponseHandler)
        /// A handler runs: its completion will ask again.
        case wait
        /// Every handler ran: deliver these completions in order, then call the finish handlers.
        case drained(completions: SmallList<QueuedResponseHandler>, finishHandlers: [@Sendable () -> Void])
    }

    /// A handler was added; it runs once those before it have.
    mutating func handlerAdded(_ handler: QueuedResponseHandler) {
        handlers.append(handler)
    }

    /// The request finished (or a handler completed, or one was added to a finished request):
    /// the next handler, if none runs.
    mutating func nextHandler() -> NextHandler {
        guard !isRunningHandler else { return .wait }
        let index = completions.count
        if index < handlers.count {
            isRunningHandler = true
            return .run(handlers[index])
        }
        let drained = NextHandler.drained(completions: completions, finishHandlers: finishHandlers)
        handlers.removeAll()
        completions.removeAll()
        finishHandlers.removeAll()
        return drained
    }

    /// The running handler's result is ready: `completion` is delivered after the last handler.
    /// Answers with the next handler.
    mutating func handlerCompleted(_ completion: QueuedResponseHandler) -> NextHandler {
        completions.append(completion)
        isRunningHandler = false
        return nextHandler()
    }

    /// `handler` runs when the handlers drain next (the request decides whether it runs at once).
    mutating func finishHandlerAdded(_ handler: @escaping @Sendable () -> Void) {
        finishHandlers.append(handler)
    }

    /// A retry begins: the handlers run again from the first, on the new attempt's outcome; a
    /// handler that asked for the retry never handed back its completion.
    mutating func retryBegins() {
        completions.removeAll()
        isRunningHandler = false
    }

    // MARK: The end of the exchange

    /// What the request does with the end of an attempt's exchange.
    enum TransferEndAction {
        /// Wake this task awaiting the response: it runs the end (`takeHandedOverCompletion()`).
        case wake(any ResponseHandlerStep)
        /// Queue the end on the root queue. `answeredAtOnce`: a URLProtocol class or the cache
        /// answered, without a round trip to the network.
        case runOnRootQueue(Request.TransferCompletion, answeredAtOnce: Bool)
    }

    /// `taker`, a handler whose task is about to wait for the response, offers to run the end of
    /// the exchange; the first offer stands.
    mutating func offerToTakeCompletion(_ taker: any ResponseHandlerStep) {
        if completionTaker == nil { completionTaker = taker }
    }

    /// The attempt's exchange ended with `completion`. After a round trip to the network, it is
    /// handed to the task that offered to run it, when every handler is awaited: a request with a
    /// closure handler too ends on the root queue, so that it never waits for a task that cannot
    /// run (a caller blocking the concurrency pool's threads until that handler is called). An
    /// end `answeredAtOnce` is queued, as Alamofire would, never handed over.
    mutating func transferEnded(_ completion: Request.TransferCompletion, answeredAtOnce: Bool) -> TransferEndAction {
        guard !answeredAtOnce, let taker = completionTaker else {
            return .runOnRootQueue(completion, answeredAtOnce: answeredAtOnce)
        }
        var everyHandlerIsAwaited = true
        handlers.forEach { if !$0.isAwaited { everyHandlerIsAwaited = false } }
        guard everyHandlerIsAwaited else { return .runOnRootQueue(completion, answeredAtOnce: false) }
        completionTaker = nil
        handedOverCompletion = completion
        return .wake(taker)
    }

    /// The queue every handler delivers its result on, when they share one (nil otherwise, or
    /// when there is no handler or a task awaits one).
    var queueEveryHandlerDeliversOn: DispatchQueue? {
        guard !handlers.isEmpty, let first = handlers[0].deliveryQueue else { return nil }
        var shared = true
        handlers.forEach { if $0.deliveryQueue !== first { shared = false } }
        return shared ? first : nil
    }

    /// The end handed over, taken once: by the woken task, or back by the request when no task
    /// woke (nil: the other took it).
    mutating func takeHandedOverCompletion() -> Request.TransferCompletion? {
        // Moved out, not copied then cleared: a copy of its fields costs more than the move.
        handedOverCompletion.take()
    }

    /// The request finishes: no exchange ends after this, so a task's offer goes (it holds the
    /// task's handler, which holds the request).
    mutating func finishingBegins() {
        completionTaker = nil
    }
}

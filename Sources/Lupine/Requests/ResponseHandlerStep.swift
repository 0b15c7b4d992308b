import Dispatch

/// A response handler whose steps are methods of one object, queued on a request.
///
/// A handler written as closures allocates a context for each step (serialize, report, ask the
/// retriers, deliver); one object holding what the steps share costs one allocation.
protocol ResponseHandlerStep: AnyObject, Sendable {
    /// Runs the handler once the request is done; it ends by calling the request's
    /// `responseHandlerDidComplete(_:)` (or by retrying the request).
    func run()
    /// Hands the result to the caller, after every handler of the request has run.
    func deliver()
    /// Whether a task awaits the result (`serializing...`) rather than a closure on a queue.
    var isAwaited: Bool { get }
    /// The queue the result is delivered on, for a closure handler (nil when a task awaits it).
    var deliveryQueue: DispatchQueue? { get }
    /// Wakes one task awaiting the result to run the end of the request's exchange itself
    /// (`Request.offerToRunCompletion(_:)`); false when no task awaits.
    func wakeOneAwaiter() -> Bool
}

/// A handler in a request's queue of response handlers, or its completion once it has run: an
/// object, or a closure for the handlers (streams, WebSocket) that are not on the path of every
/// request.
enum QueuedResponseHandler: Sendable {
    case step(any ResponseHandlerStep)
    case closure(@Sendable () -> Void)

    /// Runs the handler (a closure handler's serializer).
    func run() {
        switch self {
        case let .step(step): step.run()
        case let .closure(closure): closure()
        }
    }

    /// Whether a task awaits this handler's result.
    var isAwaited: Bool {
        if case let .step(step) = self { return step.isAwaited }
        return false
    }

    /// The queue a closure handler's result is delivered on; nil for a task awaiting it, and for
    /// the closure handlers (streams, WebSocket), whose queues are their own business.
    var deliveryQueue: DispatchQueue? {
        if case let .step(step) = self { return step.deliveryQueue }
        return nil
    }

    /// Delivers the handler's result (a closure handler's completion).
    func deliver() {
        switch self {
        case let .step(step): step.deliver()
        case let .closure(closure): closure()
        }
    }
}

extension ResponseHandlerStep {
    var deliveryQueue: DispatchQueue? { nil }
}

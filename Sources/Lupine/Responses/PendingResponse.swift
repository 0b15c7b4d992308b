import Foundation
import Synchronization

/// A response that arrives once and may be awaited any number of times, by any number of tasks.
///
/// The async API (`serializingData()`, `serializingDownload(...)`) registers its handler when it is
/// called and awaits this box. It used to start an unstructured `Task` to register and hold the
/// result: that put two more thread hand-offs on every request (starting the task, then resuming
/// its awaiter), and the request only started once the task ran.
///
/// The box is the awaited `ResponseHandler` itself (its superclass), so that an async request
/// allocates one object for its handler and its result, not two.
///
/// An awaiting task may also be woken before the response exists, to run the end of the
/// request's exchange itself (`wakeOneAwaiter()`): the validators, the monitors and the
/// serializers then run from its thread, on the root queue, and the transport's thread wakes it
/// as soon as the bytes are in, instead of after all of that. Unchecked: a non-final class
/// cannot be checked `Sendable`; all its state is behind `state`'s lock.
@usableFromInline
class PendingResponse<Response: Sendable>: @unchecked Sendable {
    private enum State {
        /// The awaiting tasks; each is resumed with the response, or with nil to run the end of
        /// the exchange handed to it (`wakeOneAwaiter()`) and then look again.
        case waiting(SmallList<UnsafeContinuation<Response?, Never>>)
        case arrived(Response)
    }

    private let state = Mutex(State.waiting(SmallList()))

    /// Delivers `response` to every awaiter, present and future. Later calls are ignored.
    @_specialize(exported: false, kind: full, where Response == DataResponse<Data, AFError>)
    @_specialize(exported: false, kind: full, where Response == DataResponse<String, AFError>)
    func fulfil(_ response: Response) {
        let waiters = state.withLock { state -> SmallList<UnsafeContinuation<Response?, Never>>? in
            guard case let .waiting(waiters) = state else { return nil }
            state = .arrived(response)
            return waiters
        }
        // Each continuation is stored once, in `value`, and taken out here once, under the lock:
        // it is resumed exactly once, which is what an unchecked continuation asks (a checked
        // one costs an allocation per await to prove it).
        waiters?.forEach { $0.resume(returning: response) }
    }

    /// Wakes one awaiting task to run the end of the exchange on its own thread; false when no
    /// task awaits.
    @_specialize(exported: false, kind: full, where Response == DataResponse<Data, AFError>)
    @_specialize(exported: false, kind: full, where Response == DataResponse<String, AFError>)
    func wakeOneAwaiter() -> Bool {
        let waiter = state.withLock { state -> UnsafeContinuation<Response?, Never>? in
            guard case var .waiting(waiters) = state, let taken = waiters.last else { return nil }
            waiters.removeLast()
            state = .waiting(waiters)
            return taken
        }
        guard let waiter else { return false }
        waiter.resume(returning: nil)
        return true
    }

    /// The response, once it has arrived.
    @usableFromInline
    var value: Response {
        // Specialized like `fulfil(_:)`: the awaiting task otherwise looks up the metadata of
        // the generic response and its optional on every await.
        @_specialize(exported: false, kind: full, where Response == DataResponse<Data, AFError>)
        @_specialize(exported: false, kind: full, where Response == DataResponse<String, AFError>)
        get async {
            while true {
                if let arrived = arrivedResponse { return arrived }
                let result: Response? = await withUnsafeContinuation { continuation in
                    let arrived = state.withLock { state -> Response? in
                        switch state {
                        case let .arrived(response):
                            return response
                        case var .waiting(waiters):
                            waiters.append(continuation)
                            state = .waiting(waiters)
                            return nil
                        }
                    }
                    if let arrived {
                        continuation.resume(returning: arrived)
                    } else {
                        awaiterDidSuspend()
                    }
                }
                if let result { return result }
                runHandedOverWork()
            }
        }
    }

    /// An awaiter is waiting: a subclass may offer it to run the end of the exchange.
    func awaiterDidSuspend() {}

    /// An awaiter was woken to run the end of the exchange.
    func runHandedOverWork() {}

    /// The response if it has arrived; copies nothing while it has not.
    private var arrivedResponse: Response? {
        @_specialize(exported: false, kind: full, where Response == DataResponse<Data, AFError>)
        @_specialize(exported: false, kind: full, where Response == DataResponse<String, AFError>)
        get {
            state.withLock { state in
                guard case let .arrived(response) = state else { return nil }
                return response
            }
        }
    }
}

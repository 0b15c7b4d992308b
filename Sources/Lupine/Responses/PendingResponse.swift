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
/// allocates one object for its handler and its result, not two. Unchecked: a non-final class
/// cannot be checked `Sendable`; all its state is behind `state`'s lock.
@usableFromInline
class PendingResponse<Response: Sendable>: @unchecked Sendable {
    private enum State {
        case waiting(SmallList<UnsafeContinuation<Response, Never>>)
        case arrived(Response)
    }

    private let state = Mutex(State.waiting(SmallList()))

    /// Delivers `response` to every awaiter, present and future. Later calls are ignored.
    @_specialize(exported: false, kind: full, where Response == DataResponse<Data, AFError>)
    @_specialize(exported: false, kind: full, where Response == DataResponse<String, AFError>)
    func fulfil(_ response: Response) {
        let waiters = state.withLock { state -> SmallList<UnsafeContinuation<Response, Never>>? in
            guard case let .waiting(waiters) = state else { return nil }
            state = .arrived(response)
            return waiters
        }
        // Each continuation is stored once, in `value`, and taken out here once, under the lock:
        // it is resumed exactly once, which is what an unchecked continuation asks (a checked
        // one costs an allocation per await to prove it).
        waiters?.forEach { $0.resume(returning: response) }
    }

    /// The response, once it has arrived.
    @usableFromInline
    var value: Response {
        get async {
            if let arrived = arrivedResponse { return arrived }
            return await withUnsafeContinuation { continuation in
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
                if let arrived { continuation.resume(returning: arrived) }
            }
        }
    }

    /// The response if it has arrived; copies nothing while it has not.
    private var arrivedResponse: Response? {
        state.withLock { state in
            guard case let .arrived(response) = state else { return nil }
            return response
        }
    }
}

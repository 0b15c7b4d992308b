import NIOConcurrencyHelpers
import Synchronization

/// A response that arrives once and may be awaited any number of times, by any number of tasks.
///
/// The async API (`serializingData()`, `serializingDownload(...)`) registers its handler when it is
/// called and awaits this box. It used to start an unstructured `Task` to register and hold the
/// result: that put two more thread hand-offs on every request (starting the task, then resuming
/// its awaiter), and the request only started once the task ran.
final class PendingResponse<Response: Sendable>: Sendable {
    private enum State {
        case waiting(SmallList<CheckedContinuation<Response, Never>>)
        case arrived(Response)
    }

    private let state = Mutex(State.waiting(SmallList()))

    /// Delivers `response` to every awaiter, present and future. Later calls are ignored.
    func fulfil(_ response: Response) {
        let waiting = state.withLock { state -> State? in
            guard case .waiting = state else { return nil }
            defer { state = .arrived(response) }
            return state
        }
        guard case let .waiting(waiters)? = waiting else { return }
        waiters.forEach { $0.resume(returning: response) }
    }

    /// The response, once it has arrived.
    var value: Response {
        get async {
            if case let .arrived(response) = state.withLock({ $0 }) { return response }
            return await withCheckedContinuation { continuation in
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
}

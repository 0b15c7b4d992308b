import Foundation
import Lupine
import Synchronization

/// `--retry N`: Lupine's `RetryPolicy` decides, with two rules of the tool's own.
///
/// - Output cannot be taken back: once a byte of the response has been printed, nothing is
///   retried (a second copy of the body would follow the first).
/// - A response whose status the policy retries (503...) is neither printed nor kept while
///   attempts remain: a validator fails it, so that the policy sees the failure it retries.
final class RetryGate: RequestInterceptor, Sendable {
    let policy: RetryPolicy
    /// Reports each retry (with `-v`).
    private let onRetry: @Sendable (_ attempt: Int, _ limit: UInt, _ delay: TimeInterval?, _ error: any Error) -> Void
    private let state = Mutex(State())

    private struct State {
        var outputBegan = false
        /// The attempt (`retryCount`) whose response is set aside for a retry.
        var setAsideAttempt: Int?
    }

    init(limit: UInt, onRetry: @escaping @Sendable (_ attempt: Int, _ limit: UInt, _ delay: TimeInterval?, _ error: any Error) -> Void) {
        policy = RetryPolicy(retryLimit: limit)
        self.onRetry = onRetry
    }

    /// Records that the response is being printed: no retry after this.
    func outputBegins() {
        state.withLock { $0.outputBegan = true }
    }

    /// Whether the response that just arrived for `request` is set aside for a retry.
    func setsAside(_ request: Request, statusCode: Int) -> Bool {
        let method = request.request?.method ?? .get
        let retriable = policy.retryableHTTPStatusCodes.contains(statusCode)
            && policy.retryableHTTPMethods.contains(method)
            && request.retryCount < Int(policy.retryLimit)
        return state.withLock { state in
            guard retriable, !state.outputBegan else { return false }
            state.setAsideAttempt = request.retryCount
            return true
        }
    }

    /// Whether the current attempt of `request` was set aside (its body is not printed).
    func isSetAside(_ request: Request) -> Bool {
        state.withLock { $0.setAsideAttempt == request.retryCount }
    }

    /// The validator that fails a set-aside response, so that the policy retries it.
    func validation(for request: DataStreamRequest) -> DataStreamRequest.Validation {
        { [weak request] _, response in
            guard let request, self.isSetAside(request) else { return .success(()) }
            return .failure(AFError.responseValidationFailed(reason: .unacceptableStatusCode(code: response.statusCode)))
        }
    }

    func retry(_ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void) {
        // A body read from a stream (standard input, a large file) cannot be sent twice.
        let replayable = request.request?.httpBodyStream == nil
        guard replayable, !state.withLock({ $0.outputBegan }) else {
            completion(.doNotRetry)
            return
        }
        policy.retry(request, for: session, dueTo: error) { [onRetry, policy] result in
            switch result {
            case .retry: onRetry(request.retryCount + 1, policy.retryLimit, nil, error)
            case let .retryWithDelay(delay): onRetry(request.retryCount + 1, policy.retryLimit, delay, error)
            case .doNotRetry, .doNotRetryWithError: break
            }
            completion(result)
        }
    }
}

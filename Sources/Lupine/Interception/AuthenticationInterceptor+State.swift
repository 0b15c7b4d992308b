import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The decisions of an AuthenticationInterceptor, as a state machine that takes events (an
// adaptation, a retry question, the end of a refresh, a new credential) and returns what the
// interceptor must do once its lock is released. It calls no user code but `requiresRefresh`,
// does no I/O and never blocks; the interceptor around it does the rest.
extension AuthenticationInterceptor {
    /// An adaptation held until a refresh ends.
    struct PendingAdapt: Sendable {
        let urlRequest: URLRequest
        let session: Session
        let completion: @Sendable (Result<URLRequest, any Error>) -> Void
    }

    /// A retry question held until a refresh ends.
    typealias PendingRetry = @Sendable (RetryResult) -> Void

    /// A `RefreshWindow`, in a form the lock may hold.
    struct RefreshLimit: Sendable {
        let interval: TimeInterval
        let maximumAttempts: Int
    }

    /// What to do after an event, outside the lock.
    enum FollowUp: Sendable {
        /// Call the authenticator's `refresh` with this credential and report the outcome to
        /// `refreshDidEnd(id:with:)` with this id.
        case refresh(Credential, id: Int)
        /// Complete the requests that were waiting.
        case settle(Settlement)
    }

    /// The requests that waited for a refresh, and how it turned out for them.
    struct Settlement: Sendable {
        enum Outcome: Sendable {
            /// The refresh gave this credential: adapt again from the start (the new credential
            /// may itself require a refresh), retry the retries.
            case refreshed(Credential)
            /// The refresh failed (or was refused): fail everything with this error.
            case failed(any Error)
            /// The credential was replaced through `credential`: adapt again from the start with the
            /// new one; retry the retries, unless the new credential is nil.
            case replaced(hasCredential: Bool)
        }

        let outcome: Outcome
        let adapts: [PendingAdapt]
        let retries: [PendingRetry]
    }

    /// The answer to an adaptation.
    enum AdaptDecision: Sendable {
        /// Apply this credential now.
        case apply(Credential)
        /// Fail the adaptation now.
        case fail(AuthenticationError)
        /// The adaptation waits for a refresh; the follow-up, if any, is for the interceptor.
        case wait(FollowUp?)
    }

    /// The answer to a retry question about a request sent with the current credential.
    enum RetryDecision: Sendable {
        /// Answer now.
        case answer(RetryResult)
        /// The question waits for a refresh; the follow-up, if any, is for the interceptor.
        case wait(FollowUp?)
    }

    /// The interceptor's mutable state: the credential, the refresh in progress (at most one for
    /// a credential), the times of past refreshes and the requests waiting for a refresh.
    struct State: Sendable {
        private enum RefreshPhase: Sendable {
            /// No refresh runs for the current credential, and none failed.
            case idle
            /// The refresh with this id runs for the current credential.
            case running(id: Int)
            /// The refresh of the current credential failed with this error; requests rejected
            /// with this credential are not retried, until the credential is replaced or a new
            /// request is adapted with it.
            case failed(any Error)
        }

        /// The credential applied to requests.
        private(set) var credential: Credential?
        /// Changes whenever `credential` is replaced, by a refresh or by the user. A decision
        /// taken about one generation never applies to another.
        private(set) var generation = 0
        private var phase = RefreshPhase.idle
        private var lastRefreshID = 0
        /// When the refreshes still inside the refresh window started (monotonic seconds).
        private var refreshTimes: [TimeInterval] = []
        private let limit: RefreshLimit?
        private var pendingAdapts: [PendingAdapt] = []
        private var pendingRetries: [PendingRetry] = []

        init(credential: Credential?, limit: RefreshLimit?) {
            self.credential = credential
            self.limit = limit
        }

        /// The credential and its generation, when there is one.
        var current: (credential: Credential, generation: Int)? {
            credential.map { ($0, generation) }
        }

        /// The adaptations waiting for the refresh that runs.
        var waitingAdaptCount: Int { pendingAdapts.count }

        /// Whether a refresh runs now.
        var isRefreshing: Bool {
            if case .running = phase { return true }
            return false
        }

        /// A request is about to be adapted.
        ///
        /// It waits only behind a refresh that adaptations started (their credential required
        /// one); while a refresh started by a rejected request runs, a new request goes out with
        /// the current credential, so that every adapter before this one runs again from scratch
        /// if it is retried. A request adapted with the credential starts a new round: the failure
        /// of an earlier refresh no longer stops the next rejection from refreshing.
        mutating func adapt(_ pending: PendingAdapt, now: TimeInterval) -> AdaptDecision {
            if isRefreshing, !pendingAdapts.isEmpty {
                pendingAdapts.append(pending)
                return .wait(nil)
            }
            guard let credential else { return .fail(.missingCredential) }
            if credential.requiresRefresh, !isRefreshing {
                pendingAdapts.append(pending)
                return .wait(startRefresh(of: credential, now: now))
            }
            if case .failed = phase { phase = .idle }
            return .apply(credential)
        }

        /// A request of credential generation `requestGeneration`, which it was authenticated
        /// with, failed authentication.
        mutating func retry(_ pending: @escaping PendingRetry, generation requestGeneration: Int, now: TimeInterval) -> RetryDecision {
            // Replaced since the request was sent: the new credential deserves a try.
            guard requestGeneration == generation, let credential else { return .answer(.retry) }
            switch phase {
            case let .failed(error):
                return .answer(.doNotRetryWithError(error))
            case .running:
                pendingRetries.append(pending)
                return .wait(nil)
            case .idle:
                pendingRetries.append(pending)
                return .wait(startRefresh(of: credential, now: now))
            }
        }

        /// The refresh `id` ended. Nil when the refresh no longer counts: the credential was
        /// replaced while it ran, or the authenticator called its completion a second time.
        mutating func refreshDidEnd(id: Int, with result: Result<Credential, any Error>) -> Settlement? {
            guard case let .running(runningID) = phase, runningID == id else { return nil }
            switch result {
            case let .success(newCredential):
                replace(with: newCredential)
                return takeWaiting(.refreshed(newCredential))
            case let .failure(error):
                phase = .failed(error)
                return takeWaiting(.failed(error))
            }
        }

        /// The user set `credential`. A refresh still running is disowned (its outcome will be
        /// ignored), a failed refresh forgotten; what waited starts over with the new credential.
        /// Past refresh times stay: replacing the credential in a loop is still a loop.
        mutating func userDidSet(_ newCredential: Credential?) -> Settlement? {
            replace(with: newCredential)
            guard !pendingAdapts.isEmpty || !pendingRetries.isEmpty else { return nil }
            return takeWaiting(.replaced(hasCredential: newCredential != nil))
        }

        private mutating func replace(with newCredential: Credential?) {
            credential = newCredential
            generation += 1
            phase = .idle
        }

        /// Starts a refresh, unless the window is full: then the refresh fails at once with
        /// `AuthenticationError.excessiveRefresh`.
        private mutating func startRefresh(of credential: Credential, now: TimeInterval) -> FollowUp {
            if let limit {
                refreshTimes.removeAll { now - $0 > limit.interval }
                if refreshTimes.count >= limit.maximumAttempts {
                    let error = AuthenticationError.excessiveRefresh
                    phase = .failed(error)
                    return .settle(takeWaiting(.failed(error)))
                }
                refreshTimes.append(now)
            }
            lastRefreshID += 1
            phase = .running(id: lastRefreshID)
            return .refresh(credential, id: lastRefreshID)
        }

        private mutating func takeWaiting(_ outcome: Settlement.Outcome) -> Settlement {
            defer {
                pendingAdapts = []
                pendingRetries = []
            }
            return Settlement(outcome: outcome, adapts: pendingAdapts, retries: pendingRetries)
        }
    }
}

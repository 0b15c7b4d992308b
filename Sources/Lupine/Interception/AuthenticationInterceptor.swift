import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Tracing
import Synchronization

/// Authenticates requests with a credential and refreshes it when it expires or is rejected.
///
/// The interceptor applies its credential to every request it adapts, through its
/// ``Authenticator``. A credential that ``AuthenticationCredential/requiresRefresh`` is refreshed
/// before a request is sent; a request whose response shows an authentication failure (as the
/// authenticator judges it, usually a 401) is retried after a refresh. However many requests
/// need it at once, one refresh runs: requests that need it meanwhile wait for it and go on with
/// its credential, or fail with its error. A request that was sent with an older credential is
/// retried with the current one without a new refresh. Once a refresh of the current credential
/// has failed, requests rejected with that credential fail with the refresh's error instead of
/// refreshing again, so a rejected credential never causes a refresh loop; a request adapted
/// after that failure starts a new round, and its rejection may refresh again. A
/// ``RefreshWindow`` caps the number of refreshes in a period of time.
///
/// ```swift
/// let interceptor = AuthenticationInterceptor(authenticator: OAuthAuthenticator(), credential: credential)
/// AF.request("https://example.com/me", interceptor: interceptor)
///     .validate()
///     .responseDecodable(of: User.self) { response in print(response.result) }
/// ```
///
/// Add `validate()` (or any validation that rejects 401) to the requests: without it a 401 is a
/// successful response and nothing is retried.
public final class AuthenticationInterceptor<AuthenticatorType>: RequestInterceptor, Sendable where AuthenticatorType: Authenticator {
    /// The credential type of the authenticator.
    public typealias Credential = AuthenticatorType.Credential

    /// How many refreshes are allowed in a period of time.
    ///
    /// Before each refresh, the interceptor counts the refreshes that started within the last
    /// `interval` seconds; when there are already `maximumAttempts` of them, the refresh is not
    /// attempted and fails with ``AuthenticationError/excessiveRefresh``. This stops a server
    /// that rejects every new credential from making the interceptor refresh without end.
    public struct RefreshWindow {
        /// The period, in seconds up to now, in which refreshes are counted.
        public let interval: TimeInterval
        /// The number of refreshes allowed within `interval`.
        public let maximumAttempts: Int

        /// Creates a refresh window.
        ///
        /// - Parameters:
        ///   - interval: The period, in seconds up to now, in which refreshes are counted. 30 by default.
        ///   - maximumAttempts: The number of refreshes allowed within `interval`. 5 by default.
        public init(interval: TimeInterval = 30.0, maximumAttempts: Int = 5) {
            self.interval = interval
            self.maximumAttempts = maximumAttempts
        }
    }

    /// The credential applied to requests; nil when there is none, and adaptations then fail
    /// with ``AuthenticationError/missingCredential``.
    ///
    /// Setting it resets the refresh state: a refresh still running is abandoned (its outcome is
    /// ignored), the failure of an earlier refresh is forgotten, and requests waiting for a
    /// refresh go on at once with the new credential. The times of past refreshes still count
    /// against the ``RefreshWindow``.
    public var credential: Credential? {
        get { state.withLock { $0.credential } }
        set {
            let settlement = state.withLock { $0.userDidSet(newValue) }
            if let settlement { settle(settlement) }
        }
    }

    /// The authenticator that applies and refreshes the credential.
    let authenticator: AuthenticatorType
    /// Where `Authenticator.refresh` is called and waiting requests are completed: never under
    /// the lock, and never on the caller's stack.
    private let queue = DispatchQueue(label: "lupine.authenticationInterceptor")
    private let state: Mutex<State>
    /// Seconds on a monotonic clock, for the refresh window; tests move it by hand.
    private let uptime: @Sendable () -> TimeInterval

    /// Creates an interceptor.
    ///
    /// - Parameters:
    ///   - authenticator: Applies the credential to requests and refreshes it.
    ///   - credential: The credential to start with; nil by default, in which case requests fail
    ///     with ``AuthenticationError/missingCredential`` until `credential` is set.
    ///   - refreshWindow: Caps refreshes in a period of time; nil turns the cap off, which lets a
    ///     server that rejects every credential cause endless refreshes. `RefreshWindow()` (five
    ///     refreshes in 30 seconds) by default.
    public convenience init(authenticator: AuthenticatorType,
                            credential: Credential? = nil,
                            refreshWindow: RefreshWindow? = RefreshWindow()) {
        self.init(authenticator: authenticator, credential: credential, refreshWindow: refreshWindow,
                  uptime: { ProcessInfo.processInfo.systemUptime })
    }

    /// Creates an interceptor that reads the time for its refresh window from `uptime`.
    init(authenticator: AuthenticatorType,
         credential: Credential?,
         refreshWindow: RefreshWindow?,
         uptime: @escaping @Sendable () -> TimeInterval) {
        self.authenticator = authenticator
        let limit = refreshWindow.map { RefreshLimit(interval: $0.interval, maximumAttempts: $0.maximumAttempts) }
        state = Mutex(State(credential: credential, limit: limit))
        self.uptime = uptime
    }

    /// Applies the credential to `urlRequest`.
    ///
    /// Without a credential, `completion` receives ``AuthenticationError/missingCredential``
    /// (the request then fails with `AFError.requestAdaptationFailed(error:)`). When the
    /// credential requires a refresh, or a refresh started that way is running, the request waits
    /// for the refresh and is then adapted again with the new credential (which may refresh once
    /// more), or fails with the refresh's error, without credentials. While a refresh started by a
    /// rejected request runs, the request goes out with the current credential. `completion` runs
    /// on the caller's thread when nothing had to wait, else on the interceptor's private queue.
    ///
    /// - Parameters:
    ///   - urlRequest: The request to authenticate.
    ///   - session: The Session of the request; a refresh this adaptation starts is given it.
    ///   - completion: Called once with the authenticated request or the error.
    public func adapt(_ urlRequest: URLRequest, for session: Session, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        let pending = PendingAdapt(urlRequest: urlRequest, session: session, completion: completion)
        let now = uptime()
        switch state.withLock({ $0.adapt(pending, now: now) }) {
        case let .apply(credential):
            completion(.success(authenticated(urlRequest, with: credential)))
        case let .fail(error):
            completion(.failure(error))
        case let .wait(followUp):
            if let followUp { perform(followUp, session: session) }
        }
    }

    /// Decides whether `request`, which failed with `error`, is retried.
    ///
    /// The answer is `.doNotRetry` when the request got no response or the authenticator does
    /// not see an authentication failure in it; `.doNotRetryWithError(AuthenticationError.missingCredential)`
    /// without a credential; `.retry` when the request was sent with an older credential than
    /// the current one. Otherwise the credential is refreshed (once, for every request that
    /// asks while it runs) and the answer is `.retry` when the refresh succeeds or
    /// `.doNotRetryWithError` with its error when it fails; after a failed refresh, requests
    /// rejected with the same credential get that error at once. `completion` runs on the caller's
    /// thread or on the interceptor's private queue.
    ///
    /// - Parameters:
    ///   - request: The failed request; its `request` and `response` are those of the failed attempt.
    ///   - session: The Session of the request; a refresh this retry starts is given it.
    ///   - error: The error the request failed with.
    ///   - completion: Called once with the decision.
    public func retry(_ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void) {
        guard let urlRequest = request.request, let response = request.response else {
            completion(.doNotRetry)
            return
        }
        guard authenticator.didRequest(urlRequest, with: response, failDueToAuthenticationError: error) else {
            completion(.doNotRetry)
            return
        }
        guard let (credential, generation) = state.withLock({ $0.current }) else {
            completion(.doNotRetryWithError(AuthenticationError.missingCredential))
            return
        }
        guard authenticator.isRequest(urlRequest, authenticatedWith: credential) else {
            completion(.retry)
            return
        }
        let now = uptime()
        switch state.withLock({ $0.retry(completion, generation: generation, now: now) }) {
        case let .answer(result):
            completion(result)
        case let .wait(followUp):
            if let followUp { perform(followUp, session: session) }
        }
    }

    /// Reads the state machine under its lock (for tests).
    func stateForTesting(_ body: (State) -> Bool) -> Bool {
        state.withLock { body($0) }
    }

    // MARK: Carrying out the state machine's decisions

    private func authenticated(_ urlRequest: URLRequest, with credential: Credential) -> URLRequest {
        var urlRequest = urlRequest
        authenticator.apply(credential, to: &urlRequest)
        return urlRequest
    }

    private func perform(_ followUp: FollowUp, session: Session) {
        switch followUp {
        case let .refresh(credential, id):
            // The refresh runs in the context of the request that asked for it (a traced Session
            // sets it around adapters and retriers), so that the requests it makes are traced
            // as that request's children: `queue.async` alone would leave the context behind.
            let context = ServiceContext.current
            queue.async {
                ServiceContext.withValue(context) {
                    self.authenticator.refresh(credential, for: session) { result in
                        let settlement = self.state.withLock { $0.refreshDidEnd(id: id, with: result) }
                        if let settlement { self.settle(settlement) }
                    }
                }
            }
        case let .settle(settlement):
            settle(settlement)
        }
    }

    /// Completes the requests that waited for a refresh, in the order they arrived.
    private func settle(_ settlement: Settlement) {
        queue.async {
            switch settlement.outcome {
            case .refreshed:
                // Adapted again, as new requests: a refreshed credential that still requires a
                // refresh refreshes again, within the refresh window.
                for pending in settlement.adapts {
                    self.adapt(pending.urlRequest, for: pending.session, completion: pending.completion)
                }
                settlement.retries.forEach { $0(.retry) }
            case let .failed(error):
                settlement.adapts.forEach { $0.completion(.failure(error)) }
                settlement.retries.forEach { $0(.doNotRetryWithError(error)) }
            case let .replaced(hasCredential):
                for pending in settlement.adapts {
                    self.adapt(pending.urlRequest, for: pending.session, completion: pending.completion)
                }
                let answer = hasCredential ? RetryResult.retry : .doNotRetryWithError(AuthenticationError.missingCredential)
                settlement.retries.forEach { $0(answer) }
            }
        }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// What a caller sets on a Request before or while it runs: credentials, progress handlers, the
// redirect and cache handlers, the cURL and URLRequest callbacks, interceptors and monitors.
extension Request {
    /// Stores a credential built from `username` and `password` for HTTP authentication challenges.
    @discardableResult
    public func authenticate(username: String, password: String, persistence: URLCredential.Persistence = .forSession) -> Self {
        authenticate(with: URLCredential(user: username, password: password, persistence: persistence))
    }

    /// Stores the credential used for HTTP authentication challenges.
    @discardableResult
    public func authenticate(with credential: URLCredential) -> Self {
        self.credential = credential
        return self
    }

    /// Sets the download progress callback (replacing any previous one), called on `queue`.
    @preconcurrency
    @discardableResult
    public func downloadProgress(queue: DispatchQueue = .lupineDefault, closure: @escaping ProgressHandler) -> Self {
        downloadProgressHandler = (closure, queue.resolvingLupineDefault(to: defaultQueue))
        return self
    }

    /// Sets the upload progress callback (replacing any previous one), called on `queue`.
    @preconcurrency
    @discardableResult
    public func uploadProgress(queue: DispatchQueue = .lupineDefault, closure: @escaping ProgressHandler) -> Self {
        uploadProgressHandler = (closure, queue.resolvingLupineDefault(to: defaultQueue))
        return self
    }

    /// Sets the request-level redirect handler. Alamofire traps when it is set twice; Lupine never
    /// crashes on API misuse, so the last handler set wins.
    @preconcurrency
    @discardableResult
    public func redirect(using handler: any RedirectHandler) -> Self {
        redirectHandler = handler
        return self
    }

    /// Sets the request-level cache handler, which decides what of this request's response is
    /// stored in the Session's `URLCache`. Alamofire traps when it is set twice; Lupine never
    /// crashes on API misuse, so the last handler set wins.
    @preconcurrency
    @discardableResult
    public func cacheResponse(using handler: any CachedResponseHandler) -> Self {
        cachedResponseHandler = handler
        return self
    }

    /// Calls `handler` once on `queue` with `cURLDescription()`: at once if a URLRequest exists,
    /// otherwise when the first one is created, or its creation or adaptation fails (only the last
    /// pending handler is kept).
    @preconcurrency
    @discardableResult
    public func cURLDescription(on queue: DispatchQueue, calling handler: @escaping @Sendable (String) -> Void) -> Self {
        let hasRequest = mutableState.withLock { state -> Bool in
            guard state.requests.isEmpty else { return true }
            state.cURLHandler = (queue, handler)
            return false
        }
        if hasRequest {
            let description = cURLDescription()
            queue.async { handler(description) }
        }
        return self
    }

    /// As `cURLDescription(on:calling:)`, on `underlyingQueue`.
    @preconcurrency
    @discardableResult
    public func cURLDescription(calling handler: @escaping @Sendable (String) -> Void) -> Self {
        cURLDescription(on: underlyingQueue, calling: handler)
    }

    /// Calls `handler` for the current last URLRequest (if any) and every later one (adaptation,
    /// retries). The last handler set wins.
    @preconcurrency
    @discardableResult
    public func onURLRequestCreation(on queue: DispatchQueue = .lupineDefault, perform handler: @escaping @Sendable (URLRequest) -> Void) -> Self {
        let queue = queue.resolvingLupineDefault(to: defaultQueue)
        let last = mutableState.withLock { state -> URLRequest? in
            state.urlRequestHandler = (queue, handler)
            return state.requests.last
        }
        if let last { queue.async { handler(last) } }
        return self
    }

    /// Adds an interceptor that runs after the Session's and after any already on this request.
    @preconcurrency
    @discardableResult
    public func interceptor(_ interceptor: any RequestInterceptor) -> Self {
        mutableState.withLock { state in
            state.interceptor = state.interceptor.map { Interceptor(interceptors: [$0, interceptor]) } ?? interceptor
        }
        return self
    }

    /// Adds an adapter after the existing ones.
    @preconcurrency
    @discardableResult
    public func adapt(using adapter: any RequestAdapter) -> Self {
        addToInterceptor(adapter: adapter, retrier: nil)
    }

    /// Adds a retrier after the existing ones.
    @preconcurrency
    @discardableResult
    public func retry(using retrier: any RequestRetrier) -> Self {
        addToInterceptor(adapter: nil, retrier: retrier)
    }

    /// The request-level interceptor becomes the existing one followed by `adapter` and `retrier`.
    private func addToInterceptor(adapter: (any RequestAdapter)?, retrier: (any RequestRetrier)?) -> Self {
        mutableState.withLock { state in
            let existing = state.interceptor.map { [$0] } ?? []
            state.interceptor = Interceptor(adapters: existing + (adapter.map { [$0] } ?? []),
                                            retriers: existing + (retrier.map { [$0] } ?? []))
        }
        return self
    }

    /// Adds a monitor after the Session's; it receives this request's events only.
    @preconcurrency
    @discardableResult
    public func eventMonitor(_ eventMonitor: any EventMonitor) -> Self {
        mutableState.withLock { $0.addedMonitors.append(eventMonitor) }
        hasAddedMonitors.store(true, ordering: .releasing)
        return self
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// How a Session sets a request up: registration, URLRequest creation, adaptation and the body
// of an upload, before the request drives its own exchange.
extension Session {
    /// Runs `work` on this Session's root queue: now when already there, on this thread when
    /// nothing waits there, else dispatched (see `RootQueueRunner`). Each saved dispatch is a
    /// thread wake-up saved on every request.
    func onRootQueue(_ work: @escaping @Sendable () -> Void) {
        rootQueueRunner.run(work)
    }

    /// Registers a new request and starts its setup now (eager) or on first resume (lazy).
    @discardableResult
    func perform<Made: Request>(_ request: Made) -> Made {
        // The flag is read under the same lock `shutdown` closes it under, so a request is either
        // registered before the shutdown looks for active requests, or refused.
        let isAccepted = activeRequests.withLockedValue { requests -> Bool in
            guard !shutdownState.isClosed else { return false }
            requests.insert(request)
            return true
        }
        guard isAccepted else {
            rejectAfterShutdown(request)
            return request
        }
        tracing?.requestWasCreated(request)
        if requestSetup == .eager { readyToPerform(request: request) }
        return request
    }

    /// The interceptor for `request`: the Session's adapters and retriers first, then the request's.
    func combinedInterceptor(for request: Request) -> (any RequestInterceptor)? {
        switch (interceptor, request.interceptor) {
        case let (session?, request?): Interceptor(interceptors: [session, request])
        case let (session?, nil): session
        case let (nil, request?): request
        case (nil, nil): nil
        }
    }

    /// Builds, validates and adapts the URLRequest of `request`, then hands it to the request.
    func setUp(_ request: Request) {
        // Called on the root queue (`readyToPerform`, a retry).
        guard let convertible = request.urlRequestConvertible else {
            request.finish(error: .createURLRequestFailed(error: URLError(.unsupportedURL)))
            return
        }
        guard !setsUpOnRootQueue else {
            guard !request.isCancelled else { return }
            switch Self.makeInitialRequest(from: convertible) {
            case let .success(initialRequest): adapt(initialRequest, for: request)
            case let .failure(error): request.didFailToCreateURLRequest(with: error)
            }
            return
        }
        requestQueue.async {
            guard !request.isCancelled else { return }
            let result = Self.makeInitialRequest(from: convertible)
            self.rootQueue.async {
                switch result {
                case let .success(initialRequest): self.adapt(initialRequest, for: request)
                case let .failure(error): request.didFailToCreateURLRequest(with: error)
                }
            }
        }
    }

    private static func makeInitialRequest(from convertible: any URLRequestConvertible) -> Result<URLRequest, AFError> {
        do {
            ThreadContract.userCode("a URLRequestConvertible")
            let initialRequest = try convertible.asURLRequest()
            try initialRequest.lupineValidateForSending()
            return .success(initialRequest)
        } catch {
            return .failure(error.asAFError ?? .createURLRequestFailed(error: error))
        }
    }

    private func adapt(_ initialRequest: URLRequest, for request: Request) {
        request.didCreateInitialURLRequest(initialRequest)
        guard !request.isCancelled else { return }
        guard let adapter = combinedInterceptor(for: request) else {
            createBody(thenSend: traced(initialRequest, for: request), for: request)
            return
        }
        let state = RequestAdapterState(requestID: request.id, session: self)
        // A span an adapter starts (a token refresh, say) is a child of the request's span.
        inRequestContext(of: request) {
            ThreadContract.userCode("a request adapter")
            adapter.adapt(initialRequest, using: state) { result in
                self.rootQueue.async {
                    do {
                        let adapted = try result.get()
                        try adapted.lupineValidateForSending()
                        request.didAdaptInitialRequest(initialRequest, to: adapted)
                        self.createBody(thenSend: self.traced(adapted, for: request), for: request)
                    } catch {
                        request.didFailToAdaptURLRequest(initialRequest, withError: .requestAdaptationFailed(error: error))
                    }
                }
            }
        }
    }

    /// `urlRequest` with the context of the request's span injected, when the Session traces.
    func traced(_ urlRequest: URLRequest, for request: Request) -> URLRequest {
        guard let tracing else { return urlRequest }
        var urlRequest = urlRequest
        tracing.prepare(&urlRequest, for: request)
        return urlRequest
    }

    /// Runs `body` with the request's span as `ServiceContext.current`, when the Session traces.
    func inRequestContext(of request: Request, _ body: () -> Void) {
        guard let tracing else {
            body()
            return
        }
        tracing.withContext(of: request, body)
    }

    /// Makes an upload's body on the request queue (a large multipart form is written to disk
    /// there), then hands the final URLRequest to the request; other requests go straight on.
    private func createBody(thenSend urlRequest: URLRequest, for request: Request) {
        guard request.createsBodyBeforeSending else {
            request.didCreateURLRequest(urlRequest)
            return
        }
        let finish: @Sendable (AFError?) -> Void = { failure in
            if let failure {
                request.didFailToCreateBody(with: failure)
            } else {
                request.didCreateURLRequest(urlRequest)
            }
        }
        // A multipart form reads its files and may write one: on the disk's threads, then back.
        if request.createsBodyOnDisk {
            DiskIO.run {
                let failure = request.createBody()
                self.rootQueueRunner.async { finish(failure) }
            }
            return
        }
        // On the root queue already; the Session's request queue targets it, so running here
        // keeps the same order without two more dispatches.
        guard !setsUpOnRootQueue else {
            finish(request.createBody())
            return
        }
        requestQueue.async {
            let failure = request.createBody()
            self.rootQueue.async { finish(failure) }
        }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// How a Session sets a request up: registration, URLRequest creation, adaptation and the body
// of an upload, before the request drives its own exchange.
extension Session {
    /// Registers a new request and starts its setup now (eager) or on first resume (lazy).
    func perform(_ request: Request) {
        activeRequests.withLockedValue { _ = $0.insert(request) }
        if requestSetup == .eager { readyToPerform(request: request) }
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
    func setUp(_ request: Request, from convertible: any URLRequestConvertible) {
        requestQueue.async {
            guard !request.isCancelled else { return }
            let initialRequest: URLRequest
            do {
                initialRequest = try convertible.asURLRequest()
                try initialRequest.lupineValidateForSending()
            } catch {
                let afError = error.asAFError ?? .createURLRequestFailed(error: error)
                self.rootQueue.async { request.didFailToCreateURLRequest(with: afError) }
                return
            }
            self.rootQueue.async { self.adapt(initialRequest, for: request) }
        }
    }

    private func adapt(_ initialRequest: URLRequest, for request: Request) {
        request.didCreateInitialURLRequest(initialRequest)
        guard !request.isCancelled else { return }
        guard let adapter = combinedInterceptor(for: request) else {
            createBody(thenSend: initialRequest, for: request)
            return
        }
        let state = RequestAdapterState(requestID: request.id, session: self)
        adapter.adapt(initialRequest, using: state) { result in
            self.rootQueue.async {
                do {
                    let adapted = try result.get()
                    try adapted.lupineValidateForSending()
                    request.didAdaptInitialRequest(initialRequest, to: adapted)
                    self.createBody(thenSend: adapted, for: request)
                } catch {
                    request.didFailToAdaptURLRequest(initialRequest, withError: .requestAdaptationFailed(error: error))
                }
            }
        }
    }

    /// Makes an upload's body on the request queue (a large multipart form is written to disk
    /// there), then hands the final URLRequest to the request; other requests go straight on.
    private func createBody(thenSend urlRequest: URLRequest, for request: Request) {
        guard request.createsBodyBeforeSending else {
            request.didCreateURLRequest(urlRequest)
            return
        }
        requestQueue.async {
            let failure = request.createBody()
            self.rootQueue.async {
                if let failure {
                    request.didFailToCreateBody(with: failure)
                } else {
                    request.didCreateURLRequest(urlRequest)
                }
            }
        }
    }
}

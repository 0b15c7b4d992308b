import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The Session as the environment of its requests: the six steps at which a request reaches it
// (see `RequestEnvironment`). The policies themselves live beside their concern: setup in
// Session+Setup, header fields and the transport's request in Session+Transport, the cache in
// Session+Caching, cookies in Session+Cookies, URLProtocol classes in Session+URLProtocol, retries
// in Session+RequestDelegate.
extension Session: RequestEnvironment {
    var requestDelegate: (any RequestDelegate)? { self }

    /// Sets up the next attempt of `request`, first or retry (on the root queue).
    func prepareAttempt(of request: Request) {
        setUp(request)
    }

    func planHop(sending urlRequest: URLRequest, for request: Request, isRedirectHop: Bool) {
        // The Session's header fields are added to what is sent; the URLRequest with them merged
        // in is made only if something reads it.
        let outgoing = outgoingRequest(for: urlRequest)
        let attemptDuration = hopSettings.attemptDuration
        guard request.usesHTTPCache else {
            request.sendHop(HopPlan(outgoing: outgoing, cacheAction: nil, attemptDuration: attemptDuration), isRedirectHop: isRedirectHop)
            return
        }
        // A task (the async API's caller, which starts its request itself) reads no file: when
        // only the cache's disk can answer, it is read on the disk's threads, and the hop goes
        // on from the root queue. The memory answers most hops, so the calling thread is looked
        // at only when it cannot (asking for the current task costs a GET about 0.7 µs).
        let cacheAction = cacheAction(for: outgoing, allowingDiskIO: false)
            ?? (ThreadContract.isInTask || ThreadContract.isOnEventLoop ? nil : cacheAction(for: outgoing, allowingDiskIO: true))
        if let cacheAction {
            request.sendHop(HopPlan(outgoing: outgoing, cacheAction: cacheAction, attemptDuration: attemptDuration),
                            isRedirectHop: isRedirectHop)
            return
        }
        DiskIO.run {
            let plan = HopPlan(outgoing: outgoing, cacheAction: self.cacheAction(for: outgoing, allowingDiskIO: true) ?? .load,
                               attemptDuration: attemptDuration)
            request.onRootQueue { request.sendHop(plan, isRedirectHop: isRedirectHop) }
        }
    }

    func prepareHop(_ plan: HopPlan, for request: Request, start: StartedHop) throws -> PreparedHop {
        let outgoing = plan.outgoing
        // A URLProtocol class of the Session may answer in place of the network (any scheme it
        // accepts, and no TLS: no trust evaluation).
        let urlProtocolClass = self.urlProtocolClass(for: outgoing, request: request)
        // A stored response that answers without the network needs no transport request.
        guard plan.cacheAction?.replayed == nil else { return PreparedHop(plan: plan, urlProtocolClass: urlProtocolClass) }
        let transportRequest = try self.transportRequest(for: outgoing.base, headerFields: outgoing.headerFields,
                                                    sortedFields: outgoing.sortedSessionFields,
                                                    body: request.transportBody(for: outgoing.base), deadline: start.deadline,
                                                    schemes: urlProtocolClass == nil ? request.supportedURLSchemes : [],
                                                    conditionalHeaders: plan.cacheAction?.conditionalHeaders ?? [],
                                                    credential: start.credential,
                                                    evaluatesTrust: urlProtocolClass == nil)
        return PreparedHop(plan: plan, urlProtocolClass: urlProtocolClass, transportRequest: transportRequest)
    }

    func execute(_ transportRequest: TransportRequest, of hop: PreparedHop, for request: Request,
                 events: any TransportEvents) -> any TransportTask {
        guard let protocolClass = hop.urlProtocolClass else { return transport.execute(transportRequest, events: events) }
        return urlProtocolTransport(protocolClass, for: hop.plan.outgoing.urlRequest, request: request, cacheAction: hop.plan.cacheAction)
            .execute(transportRequest, events: events)
    }

    /// Cookies are stored and, for a success answering an unsafe method, what the cache holds for
    /// the URL invalidated. Nil when the head asks neither, as most heads do: that is decided from
    /// the head alone, on the transport's thread. The work runs on the root queue (the storage is
    /// the user's and may touch the disk).
    func recordHead(_ head: TransportResponseHead, sentAs urlRequest: URLRequest) -> (@Sendable () -> Void)? {
        let setsCookies = head.headerFields.contains { $0.name.lupineEqualsIgnoringASCIICase("Set-Cookie") }
        // Only an unsafe method's success invalidates (RFC 9111, section 4.4). At once when that
        // touches no file, as for a URL never stored.
        let invalidates: Bool
        if let httpCache,
           HTTPCacheRules.invalidatesStoredResponse(method: urlRequest.httpMethod ?? "GET", statusCode: head.statusCode),
           let url = urlRequest.url {
            invalidates = !httpCache.invalidateWithoutTouchingFiles(url)
        } else {
            invalidates = false
        }
        guard setsCookies || invalidates else { return nil }
        return {
            if setsCookies { self.storeCookies(from: head, for: urlRequest) }
            if invalidates { self.invalidateCachedResponse(after: head, for: urlRequest) }
        }
    }

    func decideRetry(of request: Request, dueTo error: AFError, ifNotRetried: @escaping @Sendable (RetryResult) -> Void) {
        retryResult(for: request, dueTo: error) { result in
            switch result {
            case .retry, .retryWithDelay: self.retryRequest(request, withDelay: result.delay)
            case .doNotRetry, .doNotRetryWithError: ifNotRetried(result)
            }
        }
    }

    func requestDidFinish(_ request: Request) {
        cleanup(after: request)
    }
}

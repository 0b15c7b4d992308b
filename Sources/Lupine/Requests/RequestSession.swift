import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a Request needs from the Session that owns it, and nothing more: its transport, cache,
/// cookies and trust settings, and the retry decision (`RequestDelegate`'s part). The Session's
/// queues and fallbacks are values the request is made with (`RequestDefaults`), not requirements.
/// The request never downcasts its Session and never touches the Session's locks; the Session
/// never touches the request's.
protocol RequestSession: RequestDelegate {
    // MARK: Hops

    /// What a hop of `urlRequest` sends, the configuration's headers added.
    func outgoingRequest(for urlRequest: URLRequest) -> OutgoingRequest
    /// The end of an attempt that starts now (`timeoutIntervalForResource`), if bounded.
    func attemptDeadline() -> Date?

    // MARK: Transport, trust and URLProtocol classes

    /// The transport's view of a hop: scheme check, cookies, conditional headers, proxy, TLS policy.
    func transportRequest(for urlRequest: URLRequest,
                          headerFields: [String: String],
                          body: TransportRequestBody?,
                          deadline: Date?,
                          schemes: Set<String>,
                          conditionalHeaders: [HTTPHeader],
                          credential: URLCredential?,
                          evaluatesTrust: Bool) throws -> TransportRequest
    /// Starts a hop on the Session's transport.
    func execute(_ transportRequest: TransportRequest, events: any TransportEvents) -> any TransportTask
    /// The URLProtocol class of the configuration that answers `urlRequest`, if any.
    func urlProtocolClass(for outgoing: OutgoingRequest, request: Request) -> URLProtocol.Type?
    /// The transport that runs `protocolClass` for one hop.
    func urlProtocolTransport(_ protocolClass: URLProtocol.Type,
                              for urlRequest: URLRequest,
                              request: Request,
                              cacheAction: HTTPCacheAction?) -> URLProtocolTransport
    /// The credential stored for a proxy's protection space.
    func storedProxyCredential(for proxy: TransportProxy) -> URLCredential?

    // MARK: Cache and cookies

    /// What the cache does for a hop sending `urlRequest`; nil when only a read of the disk can
    /// tell and `allowingDiskIO` is false.
    func cacheAction(for outgoing: OutgoingRequest, allowingDiskIO: Bool) -> HTTPCacheAction?
    /// Forgets what the cache holds for `urlRequest` after an unsafe method's success.
    func invalidateCachedResponse(after head: TransportResponseHead, for urlRequest: URLRequest)
    /// Stores the cookies of a response head from the network.
    func storeCookies(from head: TransportResponseHead, for urlRequest: URLRequest)

    // MARK: Retries

    /// A retry begins: the request's next attempt is set up.
    func setUpRetry(of request: Request)
}

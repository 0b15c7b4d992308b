import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a Request needs from the Session that owns it, and nothing more: the Session's defaults,
/// its transport, cache, cookies and trust settings, and the retry decision (`RequestDelegate`'s
/// part). The request never downcasts its Session and never touches the Session's locks; the
/// Session never touches the request's.
protocol RequestSession: RequestDelegate {
    // MARK: Defaults

    /// Whether a request's setup waits for its first `resume()` (`RequestSetup.lazy`).
    var setsUpLazily: Bool { get }
    /// The Session's redirect handler, for requests without their own.
    var defaultRedirectHandler: (any RedirectHandler)? { get }
    /// The Session's cache handler, for requests without their own.
    var defaultCachedResponseHandler: (any CachedResponseHandler)? { get }
    /// What a hop of `urlRequest` sends, the configuration's headers added.
    func outgoingRequest(for urlRequest: URLRequest) -> OutgoingRequest
    /// The end of an attempt that starts now (`timeoutIntervalForResource`), if bounded.
    func attemptDeadline() -> Date?

    // MARK: Queues

    /// Runs `work` on the Session's root queue (at once when already there).
    func onRootQueue(_ work: @escaping @Sendable () -> Void)
    /// Runs root-queue work with as few thread hand-offs as the queue contract allows.
    var rootQueueRunner: RootQueueRunner { get }
    /// Whether the serialization queue is the Session's own, which targets the root queue.
    var serializesOnRootQueue: Bool { get }

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
    /// The engine a WebSocket upgrade runs on: the Session's own, or a shared one when the Session
    /// runs on another transport (a test double), since the upgrade needs a connection of its own.
    var webSocketEngine: ConnectionEngine { get }
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

    /// The Session's HTTP cache, if the configuration has one.
    var httpCache: HTTPCache? { get }
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

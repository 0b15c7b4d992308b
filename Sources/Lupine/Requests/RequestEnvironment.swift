import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a Request needs from the owner that runs it, and nothing more: a Session, or a test double
/// that plays scripted exchanges without a socket.
///
/// A request's life reaches its owner at six steps: an attempt is prepared, each hop of it is
/// planned, prepared and executed, each response head from the network is recorded, a failure
/// asks for a retry, and the finished request is let go. The owner's queues and fallbacks are
/// values the request is made with (`RequestDefaults`), not requirements.
///
/// Planning and preparing a hop are two calls, not one: the plan may need the cache's disk, so it
/// comes before the request's state machine starts the hop, and the preparation needs what that
/// start decides (the attempt's deadline, and whether the request was cancelled meanwhile).
///
/// Threads: every call but `recordHead` comes from the owner's root queue (or, for the async API,
/// from the caller's thread running as the root queue; see `RootQueueRunner`). `recordHead` comes
/// from the transport's thread and must not run user code or touch the disk there: what it cannot
/// decide from the head alone it returns as work that the request runs on the root queue.
///
/// The request never downcasts its owner and never touches the owner's locks; the owner never
/// touches the request's.
protocol RequestEnvironment: AnyObject, Sendable {
    /// The owner as Alamofire's public `RequestDelegate` (`Request.delegate`): the Session itself;
    /// nil for an owner that is no Session.
    var requestDelegate: (any RequestDelegate)? { get }

    /// Prepares the next attempt of `request` (its first, or a retry's): its URLRequest is made,
    /// adapted and given its body, then handed to `request.didCreateURLRequest(_:)`, or the
    /// request is failed. Called on the root queue once the request's state machine allows it.
    func prepareAttempt(of request: Request)

    /// Plans a hop of `request` sending `urlRequest`: what it sends with the owner's header fields,
    /// and what the cache does for it; then calls `request.sendHop(_:isRedirectHop:)` with the
    /// plan, at once or, when only the cache's disk can tell, later on the root queue.
    func planHop(sending urlRequest: URLRequest, for request: Request, isRedirectHop: Bool)

    /// What the transport needs for the planned hop the request's state machine has just started:
    /// the URLProtocol class that answers it, if any, and the transport's request (none for a
    /// replay from the cache).
    /// - Throws: the `AFError` the attempt fails with (a scheme the request kind does not speak,
    ///   a URL without a host, a TLS policy that cannot be made...).
    func prepareHop(_ plan: HopPlan, for request: Request, start: StartedHop) throws -> PreparedHop

    /// Starts the prepared hop, whose transport request is `transportRequest`, on the owner's
    /// transport or its URLProtocol class; the exchange reports to `events`.
    func execute(_ transportRequest: TransportRequest, of hop: PreparedHop, for request: Request,
                 events: any TransportEvents) -> any TransportTask

    /// Records a response head from the network (redirect hops and challenges included) received
    /// for `urlRequest`: its cookies, and the cache's invalidation after an unsafe method. Returns
    /// the work that needs the root queue, or nil when the head asks nothing, as most do.
    func recordHead(_ head: TransportResponseHead, sentAs urlRequest: URLRequest) -> (@Sendable () -> Void)?

    /// Decides whether `request` is retried after `error`. When it is, the owner schedules the
    /// retry itself (`Request.scheduleRetry()`, then `Request.beginRetry()` on the root queue);
    /// otherwise `ifNotRetried` gets the retriers' answer (`.doNotRetry`, or
    /// `.doNotRetryWithError` with the error the request then finishes with), on the root queue.
    func decideRetry(of request: Request, dueTo error: AFError,
                     ifNotRetried: @escaping @Sendable (RetryResult) -> Void)

    /// `request` finished and its serializers ran: the owner forgets it.
    func requestDidFinish(_ request: Request)
}

/// A hop as its owner planned it, before the request's state machine starts it.
struct HopPlan: Sendable {
    /// What the hop sends: the request as adapted, with the owner's header fields.
    let outgoing: OutgoingRequest
    /// What the cache does for the hop; nil for a request that bypasses the cache (downloads).
    let cacheAction: HTTPCacheAction?
    /// How long an attempt that starts with this hop may last in all, redirect hops included
    /// (`timeoutIntervalForResource`); nil when unbounded.
    let attemptDuration: TimeInterval?
}

/// What the request's state machine decided as it started a hop, for the owner preparing it.
struct StartedHop {
    /// When the attempt ends, if bounded.
    let deadline: Date?
    /// The credential given to the request (`authenticate(...)`), for a TLS client certificate.
    let credential: URLCredential?
}

/// A hop ready to go: how it is answered, and what the transport sends.
struct PreparedHop {
    /// What the hop sends and what the cache does for it.
    let plan: HopPlan
    /// The URLProtocol class of the owner's configuration that answers the hop in place of the
    /// network, if any (any scheme it accepts, and no TLS: no trust evaluation).
    let urlProtocolClass: URLProtocol.Type?
    /// The transport's request; nil for a hop the cache answers with a stored response.
    var transportRequest: TransportRequest?
}
